import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type MigrationUnderTest,
  migrationUnderTest,
  storedDeviceRun,
  storedExecution,
  storeOrganizationWithVersion,
} from "./migration-test.fixture.ts";

/**
 * Migration 0029 adds device runs' selectors (API.md §13), shards_planned and setup_ms, and the table of their
 * models and labels, on both databases: the runs stored before it ask for nothing new, and it is undone whole.
 */

let migration: MigrationUnderTest;

const newColumns = [
  "required_api_level_min",
  "required_api_level_max",
  "required_os_version_min",
  "required_os_version_max",
  "required_abi",
  "required_emulator",
  "required_models",
  "required_labels",
  "shards_planned",
  "setup_ms",
];

beforeAll(async () => {
  migration = await migrationUnderTest("2026-11-28-0029-device-pools");
  const { db } = migration;
  await storeOrganizationWithVersion(db, "org_a");
  await db.insertInto("executions").values(storedExecution("ex_1", "org_a")).execute();
  await db
    .insertInto("device_runs")
    .values({ ...storedDeviceRun("dr_1", "ex_1"), required_platform: "android", required_model: "Pixel 7" })
    .execute();
});
afterAll(async () => {
  await migration?.close();
});

it("keeps the runs stored before it, asking for no selector, and stores a run's selectors after it", async () => {
  await migration.up();
  const before = await migration.db
    .selectFrom("device_runs")
    .selectAll()
    .where("id", "=", "dr_1")
    .executeTakeFirst();
  expect(Object.fromEntries(newColumns.map((column) => [column, before?.[column]]))).toEqual({
    required_api_level_min: null,
    required_api_level_max: null,
    required_os_version_min: null,
    required_os_version_max: null,
    required_abi: null,
    required_emulator: null,
    required_models: 0,
    required_labels: 0,
    shards_planned: null,
    setup_ms: null,
  });
  expect(before?.required_model).toBe("Pixel 7");

  await migration.db
    .insertInto("device_runs")
    .values({
      ...storedDeviceRun("dr_2", "ex_1"),
      required_platform: "android",
      required_api_level_min: 34,
      required_os_version_min: "000014",
      required_emulator: 1,
      required_labels: 2,
      setup_ms: 1500,
    })
    .execute();
  await migration.db
    .insertInto("device_run_selector_values")
    .values([
      { device_run_id: "dr_2", selector: "label", value: "gpu=host" },
      { device_run_id: "dr_2", selector: "label", value: "tier=fast" },
    ])
    .execute();
  // One row per run, selector and value.
  await expect(
    migration.db
      .insertInto("device_run_selector_values")
      .values({ device_run_id: "dr_2", selector: "label", value: "gpu=host" })
      .execute(),
  ).rejects.toThrow();
  const after = await migration.db
    .selectFrom("device_runs")
    .selectAll()
    .where("id", "=", "dr_2")
    .executeTakeFirst();
  expect([after?.required_api_level_min, after?.required_labels, after?.setup_ms].map(Number)).toEqual([
    34, 2, 1500,
  ]);
});

it("is undone, keeping the runs and their other requirements", async () => {
  await migration.down();
  const rows = await migration.db
    .selectFrom("device_runs")
    .select(["id", "required_platform", "required_model"])
    .orderBy("id")
    .execute();
  expect(rows).toEqual([
    { id: "dr_1", required_platform: "android", required_model: "Pixel 7" },
    { id: "dr_2", required_platform: "android", required_model: null },
  ]);
  const tables = await migration.db.introspection.getTables();
  expect(tables.map((table) => table.name)).not.toContain("device_run_selector_values");
  const columns = tables.find((table) => table.name === "device_runs")?.columns.map((column) => column.name);
  for (const column of newColumns) expect(columns).not.toContain(column);

  await migration.up();
});
