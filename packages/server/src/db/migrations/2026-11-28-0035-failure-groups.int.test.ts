import { afterAll, beforeAll, expect, it } from "vitest";
import { recordFailureGroups } from "../../features/failures/failure-groups.writer.ts";
import {
  type MigrationUnderTest,
  migrationUnderTest,
  storedAt,
  storedDeviceRun,
  storedExecution,
  storeOrganizationWithVersion,
} from "./migration-test.fixture.ts";

/**
 * Migration 0035 makes the failure groups of the failures stored before it, as GET /failures counted them from
 * the cases (per plan: occurrences, first and last occurrence), on both databases; the writer then goes on from
 * those rows.
 */

let migration: MigrationUnderTest;

beforeAll(async () => {
  migration = await migrationUnderTest("2026-11-28-0035-failure-groups");
  await storeOrganizationWithVersion(migration.db, "org_1");
  for (const plan of ["tp_a", "tp_b"]) {
    await migration.db
      .insertInto("test_plans")
      .values({
        id: plan,
        organization_id: "org_1",
        app_id: "app_1",
        name: plan,
        state: "active",
        devices: "[]",
        steps: "[]",
        timeout_seconds: 60,
        max_attempts: 1,
        created_at: storedAt,
        updated_at: storedAt,
      })
      .execute();
  }
});
afterAll(async () => {
  await migration?.close();
});

/** An execution of `plan` made at `at`, whose one run's attempt `attempt` reported `cases` ([signature or null]). */
async function reported(
  plan: string | null,
  execution: string,
  at: string,
  cases: Array<string | null>,
  attempt = 1,
) {
  const { db } = migration;
  await db
    .insertInto("executions")
    .values(storedExecution(execution, "org_1", { test_plan_id: plan, created_at: at }))
    .execute();
  await db
    .insertInto("device_runs")
    .values({ ...storedDeviceRun(`dr_${execution}`, execution), attempt })
    .execute();
  await db
    .insertInto("test_cases")
    .values(
      cases.map((signature, i) => ({
        device_run_id: `dr_${execution}`,
        attempt,
        seq: i + 1,
        step_index: 0,
        classname: "com.example.LoginTest",
        name: `case${i}`,
        status: signature === null ? "passed" : "failed",
        test_id: `t_${i}`,
        failure_signature: signature,
      })),
    )
    .execute();
}

it("makes a row per plan and signature from the stored failures; the writer goes on from them", async () => {
  const { db } = migration;
  await reported("tp_a", "ex_1", "2026-01-01T10:00:00.000Z", ["sig_x", null, "sig_x", "sig_y"]);
  await reported("tp_a", "ex_2", "2026-01-02T10:00:00.000Z", [null, "sig_x"], 2);
  await reported("tp_b", "ex_3", "2026-01-01T12:00:00.000Z", ["sig_x"]);
  // A WebDriver session's failures (no plan) are in no group.
  await reported(null, "ex_4", "2026-01-03T10:00:00.000Z", ["sig_x"]);

  await migration.up();

  const rows = await db
    .selectFrom("failure_groups")
    .selectAll()
    .orderBy("test_plan_id")
    .orderBy("signature")
    .execute();
  expect(rows.map((row) => ({ ...row, occurrences: Number(row.occurrences) }))).toEqual([
    {
      organization_id: "org_1",
      test_plan_id: "tp_a",
      signature: "sig_x",
      package_name: "com.example.basic",
      occurrences: 3,
      test_ids: '["t_0","t_1","t_2"]',
      first_at: "2026-01-01T10:00:00.000Z",
      first_execution_id: "ex_1",
      last_at: "2026-01-02T10:00:00.000Z",
      last_execution_id: "ex_2",
      last_device_run_id: "dr_ex_2",
      last_attempt: 2,
      last_seq: 2,
    },
    {
      organization_id: "org_1",
      test_plan_id: "tp_a",
      signature: "sig_y",
      package_name: "com.example.basic",
      occurrences: 1,
      test_ids: '["t_3"]',
      first_at: "2026-01-01T10:00:00.000Z",
      first_execution_id: "ex_1",
      last_at: "2026-01-01T10:00:00.000Z",
      last_execution_id: "ex_1",
      last_device_run_id: "dr_ex_1",
      last_attempt: 1,
      last_seq: 4,
    },
    {
      organization_id: "org_1",
      test_plan_id: "tp_b",
      signature: "sig_x",
      package_name: "com.example.basic",
      occurrences: 1,
      test_ids: '["t_0"]',
      first_at: "2026-01-01T12:00:00.000Z",
      first_execution_id: "ex_3",
      last_at: "2026-01-01T12:00:00.000Z",
      last_execution_id: "ex_3",
      last_device_run_id: "dr_ex_3",
      last_attempt: 1,
      last_seq: 1,
    },
  ]);

  // An earlier execution's failure, recorded late (a slow shard): the first occurrence moves back, the last stays.
  await recordFailureGroups(
    db,
    {
      organizationId: "org_1",
      testPlanId: "tp_a",
      executionId: "ex_0",
      executionCreatedAt: "2025-12-31T10:00:00.000Z",
      packageName: "com.example.basic",
      ownPackageNames: ["com.example.basic"],
    },
    [
      { device_run_id: "dr_ex_0", attempt: 1, seq: 7, test_id: "t_9", failure_signature: "sig_x" },
      { device_run_id: "dr_ex_0", attempt: 1, seq: 9, test_id: "t_0", failure_signature: "sig_x" },
    ],
  );
  const group = await db
    .selectFrom("failure_groups")
    .selectAll()
    .where("test_plan_id", "=", "tp_a")
    .where("signature", "=", "sig_x")
    .executeTakeFirstOrThrow();
  expect(Number(group.occurrences)).toBe(5);
  // The new test joins the set, the known one is not repeated.
  expect(JSON.parse(group.test_ids)).toEqual(["t_0", "t_1", "t_2", "t_9"]);
  expect([group.first_at, group.first_execution_id]).toEqual(["2025-12-31T10:00:00.000Z", "ex_0"]);
  expect([group.last_execution_id, Number(group.last_seq)]).toEqual(["ex_2", 2]);

  await migration.down();
  await expect(db.selectFrom("failure_groups").selectAll().execute()).rejects.toThrow();
});
