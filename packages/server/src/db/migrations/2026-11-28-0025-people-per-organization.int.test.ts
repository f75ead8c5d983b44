import { afterAll, beforeAll, expect, it } from "vitest";
import { storedAt as at, type MigrationUnderTest, migrationUnderTest } from "./migration-test.fixture.ts";

/**
 * Migration 0025 makes an email unique within an organization instead of on the server, on both databases,
 * keeping the people and their sessions stored before it.
 */

let migration: MigrationUnderTest;

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
  migration = await migrationUnderTest("2026-11-28-0025-people-per-organization");
  const { db } = migration;
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
  await migration?.close();
});

it("keeps every person and session, and lets an email have an account in each organization", async () => {
  const { db } = migration;
  // Before it, one email is one account on the server.
  await expect(
    db
      .insertInto("users")
      .values(person("usr_x", "org_g", "ann@example.com"))
      .execute(),
  ).rejects.toThrow();

  await migration.up();

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
  const { db } = migration;
  await expect(migration.down()).rejects.toThrow();
  expect(await db.selectFrom("users").select("id").orderBy("id").execute()).toHaveLength(3);

  await db.deleteFrom("sessions").where("user_id", "=", "usr_3").execute();
  await db.deleteFrom("users").where("id", "=", "usr_3").execute();
  await migration.down();
  await expect(
    db
      .insertInto("users")
      .values(person("usr_5", "org_g", "ann@example.com"))
      .execute(),
  ).rejects.toThrow();
  expect(await db.selectFrom("sessions").select("id_hash").execute()).toEqual([{ id_hash: "h1" }]);

  await migration.up();
  await db
    .insertInto("users")
    .values(person("usr_6", "org_g", "ann@example.com"))
    .execute();
});
