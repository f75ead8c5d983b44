import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Kysely, Migrator } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/harness.ts";
import { type DatabaseHandle, openDatabase } from "../kysely.ts";
import { migrations } from "./index.ts";

/** Migration 0027 adds agents.appium on both databases: the agents seen before it offer no Appium. */

let dir: string;
let database: TestDatabase;
let handle: DatabaseHandle;
// The tables as they were before migration 0027: untyped on purpose.
let db: Kysely<any>;
let migrator: Migrator;

const before = "2026-11-28-0026-webdriver-sessions";
const after = "2026-11-28-0027-agent-appium";
const agent = {
  organization_id: "org_a",
  id: "lab-host",
  name: "lab-host",
  last_seen_at: "2026-01-01T00:00:00.000Z",
  step_types: "inspect",
  devices: "[]",
  drained_devices: "[]",
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-0027-"));
  database = await createTestDatabase(dir);
  handle = openDatabase(database.url);
  db = handle.db;
  migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateTo(before);
  if (error) throw error;
  await db
    .insertInto("organizations")
    .values({ id: "org_a", name: "acme", created_at: agent.last_seen_at })
    .execute();
  await db.insertInto("agents").values(agent).execute();
});
afterAll(async () => {
  await handle?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

it("keeps the agents seen before it, with no Appium, and stores an Appium after it", async () => {
  const { error } = await migrator.migrateTo(after);
  if (error) throw error;
  expect(await db.selectFrom("agents").selectAll().execute()).toEqual([{ ...agent, appium: null }]);

  const appium = JSON.stringify({ version: "2.19.0", drivers: [] });
  await db.updateTable("agents").set({ appium }).execute();
  expect(await db.selectFrom("agents").select("appium").execute()).toEqual([{ appium }]);
});

it("is undone, keeping the agents", async () => {
  const down = await migrator.migrateTo(before);
  if (down.error) throw down.error;
  expect(await db.selectFrom("agents").selectAll().execute()).toEqual([agent]);

  const up = await migrator.migrateTo(after);
  if (up.error) throw up.error;
});
