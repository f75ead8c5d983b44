import { afterAll, beforeAll, expect, it } from "vitest";
import { type MigrationUnderTest, migrationUnderTest, storedAt } from "./migration-test.fixture.ts";

/** Migration 0027 adds agents.appium on both databases: the agents seen before it offer no Appium. */

let migration: MigrationUnderTest;

const agent = {
  organization_id: "org_a",
  id: "lab-host",
  name: "lab-host",
  last_seen_at: storedAt,
  step_types: "inspect",
  devices: "[]",
  drained_devices: "[]",
};

beforeAll(async () => {
  migration = await migrationUnderTest("2026-11-28-0027-agent-appium");
  const { db } = migration;
  await db.insertInto("organizations").values({ id: "org_a", name: "acme", created_at: storedAt }).execute();
  await db.insertInto("agents").values(agent).execute();
});
afterAll(async () => {
  await migration?.close();
});

it("keeps the agents seen before it, with no Appium, and stores an Appium after it", async () => {
  const { db } = migration;
  await migration.up();
  expect(await db.selectFrom("agents").selectAll().execute()).toEqual([{ ...agent, appium: null }]);

  const appium = JSON.stringify({ version: "2.19.0", drivers: [] });
  await db.updateTable("agents").set({ appium }).execute();
  expect(await db.selectFrom("agents").select("appium").execute()).toEqual([{ appium }]);
});

it("is undone, keeping the agents", async () => {
  const { db } = migration;
  await migration.down();
  expect(await db.selectFrom("agents").selectAll().execute()).toEqual([agent]);

  await migration.up();
});
