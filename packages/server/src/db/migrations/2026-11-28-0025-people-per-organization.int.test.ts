import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Kysely, Migrator } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/harness.ts";
import { type DatabaseHandle, openDatabase } from "../kysely.ts";
import { migrations } from "./index.ts";

/**
 * Migration 0025 makes an email unique within an organization instead of on the server, on both databases,
 * keeping the people and their sessions stored before it.
 */

let dir: string;
let database: TestDatabase;
let handle: DatabaseHandle;
// The tables as they were before migration 0025: untyped on purpose.
let db: Kysely<any>;
let migrator: Migrator;

const before = "2026-11-28-0024-client-names";
const after = "2026-11-28-0025-people-per-organization";
const at = "2026-01-01T00:00:00.000Z";

const person = (id: string, organization: string, email: string) => ({
  id,
  organization_id: organization,
  email,
  email_folded: email.toLowerCase(),
  role: "member",
  password_hash: `hash-of-${id}`,
  created_at: at,
  disabled_at: null,
  last_sign_in_at: at,
});

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-0025-"));
  database = await createTestDatabase(dir);
  handle = openDatabase(database.url);
  db = handle.db;
  migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateTo(before);
  if (error) throw error;
  await db
    .insertInto("organizations")
    .values([
      { id: "org_a", name: "acme", created_at: at },
      { id: "org_g", name: "globex", created_at: at },
    ])
    .execute();
  await db
    .insertInto("users")
    .values([person("usr_1", "org_a", "Ann@Example.com"), person("usr_2", "org_g", "bob@example.com")])
    .execute();
  await db
    .insertInto("sessions")
    .values({ id_hash: "h1", user_id: "usr_1", created_at: at, last_seen_at: at })
    .execute();
});
afterAll(async () => {
  await handle?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

it("keeps every person and session, and lets an email have an account in each organization", async () => {
  // Before it, one email is one account on the server.
  await expect(
    db
      .insertInto("users")
      .values(person("usr_x", "org_g", "ann@example.com"))
      .execute(),
  ).rejects.toThrow();

  const { error } = await migrator.migrateTo(after);
  if (error) throw error;

  const users = await db.selectFrom("users").selectAll().orderBy("id").execute();
  expect(users).toEqual([
    person("usr_1", "org_a", "Ann@Example.com"),
    person("usr_2", "org_g", "bob@example.com"),
  ]);
  const sessions = await db.selectFrom("sessions").selectAll().execute();
  expect(sessions).toEqual([{ id_hash: "h1", user_id: "usr_1", created_at: at, last_seen_at: at }]);

  await db
    .insertInto("users")
    .values(person("usr_3", "org_g", "ann@example.com"))
    .execute();
  // Within one organization it is still one account.
  await expect(
    db
      .insertInto("users")
      .values(person("usr_4", "org_a", "ann@example.com"))
      .execute(),
  ).rejects.toThrow();
  // Sessions still belong to stored people only.
  await expect(
    db
      .insertInto("sessions")
      .values({ id_hash: "h2", user_id: "usr_nobody", created_at: at, last_seen_at: at })
      .execute(),
  ).rejects.toThrow();
  await db
    .insertInto("sessions")
    .values({ id_hash: "h3", user_id: "usr_3", created_at: at, last_seen_at: at })
    .execute();
});

it("is undone only while no email has accounts in two organizations", async () => {
  const refused = await migrator.migrateTo(before);
  expect(refused.error).toBeDefined();
  expect(await db.selectFrom("users").select("id").orderBy("id").execute()).toHaveLength(3);

  await db.deleteFrom("sessions").where("user_id", "=", "usr_3").execute();
  await db.deleteFrom("users").where("id", "=", "usr_3").execute();
  const down = await migrator.migrateTo(before);
  if (down.error) throw down.error;
  await expect(
    db
      .insertInto("users")
      .values(person("usr_5", "org_g", "ann@example.com"))
      .execute(),
  ).rejects.toThrow();
  expect(await db.selectFrom("sessions").select("id_hash").execute()).toEqual([{ id_hash: "h1" }]);

  const up = await migrator.migrateTo(after);
  if (up.error) throw up.error;
  await db
    .insertInto("users")
    .values(person("usr_6", "org_g", "ann@example.com"))
    .execute();
});
