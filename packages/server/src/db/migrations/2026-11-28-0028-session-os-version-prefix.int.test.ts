import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type MigrationUnderTest,
  migrationUnderTest,
  storedDeviceRun,
  storedExecution,
  storeOrganizationWithVersion,
} from "./migration-test.fixture.ts";

/**
 * Migration 0028 adds device_runs.required_os_version_prefix on both databases: the runs stored before it, a
 * plan's with its exact OS version among them, keep their requirements and ask for no prefix.
 */

let migration: MigrationUnderTest;

const run = { ...storedDeviceRun("dr_1", "ex_1"), required_platform: "ios", required_os_version: "17.4" };

beforeAll(async () => {
  migration = await migrationUnderTest("2026-11-28-0028-session-os-version-prefix");
  const { db } = migration;
  await storeOrganizationWithVersion(db, "org_a");
  await db.insertInto("executions").values(storedExecution("ex_1", "org_a")).execute();
  await db.insertInto("device_runs").values(run).execute();
});
afterAll(async () => {
  await migration?.close();
});

const requirements = () =>
  migration.db
    .selectFrom("device_runs")
    .selectAll()
    .orderBy("id")
    .execute()
    .then((rows) =>
      rows.map((row) => ({
        id: row.id,
        required_platform: row.required_platform,
        required_os_version: row.required_os_version,
        required_os_version_prefix: row.required_os_version_prefix,
      })),
    );

it("keeps the runs stored before it, with their exact OS version and no prefix, and stores a prefix after it", async () => {
  await migration.up();
  expect(await requirements()).toEqual([
    { id: "dr_1", required_platform: "ios", required_os_version: "17.4", required_os_version_prefix: null },
  ]);

  await migration.db
    .insertInto("device_runs")
    .values({
      ...storedDeviceRun("dr_2", "ex_1"),
      required_platform: "ios",
      required_os_version_prefix: "17",
    })
    .execute();
  expect((await requirements())[1]).toEqual({
    id: "dr_2",
    required_platform: "ios",
    required_os_version: null,
    required_os_version_prefix: "17",
  });
});

it("is undone, keeping the runs and their other requirements", async () => {
  await migration.down();
  const rows = await migration.db
    .selectFrom("device_runs")
    .select(["id", "required_platform", "required_os_version"])
    .orderBy("id")
    .execute();
  expect(rows).toEqual([
    { id: "dr_1", required_platform: "ios", required_os_version: "17.4" },
    { id: "dr_2", required_platform: "ios", required_os_version: null },
  ]);
  const columns = (await migration.db.introspection.getTables()).find(
    (table) => table.name === "device_runs",
  );
  expect(columns?.columns.map((column) => column.name)).not.toContain("required_os_version_prefix");

  await migration.up();
});
