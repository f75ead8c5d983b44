import { afterAll, beforeAll, expect, it } from "vitest";
import { testId } from "../../features/tests/test-id.ts";
import {
  type MigrationUnderTest,
  migrationUnderTest,
  storedDeviceRun,
  storedExecution,
  storeOrganizationWithVersion,
} from "./migration-test.fixture.ts";

/**
 * Migration 0017 gives the test cases stored before it their test's id, computed as GET /executions/{id}/tests
 * computes it, on both databases: names of any length and script, the same names in two plans, many tests.
 */

let migration: MigrationUnderTest;

beforeAll(async () => {
  migration = await migrationUnderTest("2026-11-24-0017-test-quarantine");
  await storeOrganizationWithVersion(migration.db, "org_1");
});
afterAll(async () => {
  await migration?.close();
});

/** An execution of `plan` with one device run whose attempt 1 reported `names` ([classname, name]). */
async function reported(plan: string, execution: string, names: Array<[string, string]>) {
  const { db } = migration;
  await db
    .insertInto("executions")
    .values(storedExecution(execution, "org_1", { test_plan_id: plan }))
    .execute();
  await db
    .insertInto("device_runs")
    .values(storedDeviceRun(`dr_${execution}`, execution))
    .execute();
  for (let i = 0; i < names.length; i += 500) {
    await db
      .insertInto("test_cases")
      .values(
        names.slice(i, i + 500).map(([classname, name], j) => ({
          device_run_id: `dr_${execution}`,
          attempt: 1,
          seq: i + j + 1,
          step_index: 0,
          classname,
          name,
          status: "passed",
        })),
      )
      .execute();
  }
}

it("backfills every stored test case's test_id with testId(plan, classname, name)", async () => {
  const { db } = migration;
  // The longest names an agent may report, in 4-byte characters: beyond what a PostgreSQL B-tree entry holds.
  const longest: [string, string] = ["😀".repeat(500), "𝔸".repeat(500)];
  const many = Array.from({ length: 1_200 }, (_, i): [string, string] => [
    "com.example.ManyTest",
    `case${i}`,
  ]);
  await reported("tp_a", "ex_1", [["com.example.LoginTest", "signsIn"], longest, ...many]);
  await reported("tp_a", "ex_2", [
    ["com.example.LoginTest", "signsIn"],
    ["com.example.LoginTest", "ünïcödé"],
  ]);
  // The same names in another plan are another test.
  await reported("tp_b", "ex_3", [["com.example.LoginTest", "signsIn"]]);

  await migration.up();

  const rows = await db
    .selectFrom("test_cases")
    .innerJoin("device_runs", "device_runs.id", "test_cases.device_run_id")
    .innerJoin("executions", "executions.id", "device_runs.execution_id")
    .select(["executions.test_plan_id", "test_cases.classname", "test_cases.name", "test_cases.test_id"])
    .execute();
  expect(rows).toHaveLength(1_205);
  const wrong = rows.filter((row) => row.test_id !== testId(row.test_plan_id, row.classname, row.name));
  expect(wrong).toEqual([]);
  const signsIn = rows.filter((row) => row.name === "signsIn");
  expect(new Set(signsIn.map((row) => `${row.test_plan_id} ${row.test_id}`)).size).toBe(2);
  expect(rows.find((row) => row.name === longest[1])?.test_id).toMatch(/^t_[0-9a-f]{24}$/);
  // The scratch table is gone.
  const tables = (await db.introspection.getTables()).map((table) => table.name);
  expect(tables).toContain("test_quarantines");
  expect(tables).not.toContain("test_id_backfill");
});

it("can be undone and done again", async () => {
  const { db } = migration;
  await migration.down();
  const tables = await db.introspection.getTables();
  expect(tables.map((table) => table.name)).not.toContain("test_quarantines");
  const testCases = tables.find((table) => table.name === "test_cases");
  expect(testCases?.columns.map((column) => column.name)).not.toContain("test_id");
  await migration.up();
  const missing = await db.selectFrom("test_cases").select("seq").where("test_id", "is", null).execute();
  expect(missing).toEqual([]);
});
