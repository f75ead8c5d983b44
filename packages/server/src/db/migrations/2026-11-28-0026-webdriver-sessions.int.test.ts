import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  storedAt as at,
  storedDeviceRun as deviceRun,
  type MigrationUnderTest,
  migrationUnderTest,
  storedExecution,
  storeOrganizationWithVersion,
} from "./migration-test.fixture.ts";

/**
 * Migration 0026 lets an execution be a WebDriver session (kind, no plan, no version) and adds
 * webdriver_sessions, on both databases, keeping the executions stored before it, their device runs' references
 * and the indexes of executions (SQLite rebuilds the table).
 */

let migration: MigrationUnderTest;

const execution = (id: string, overrides: Record<string, unknown> = {}) =>
  storedExecution(id, "org_a", overrides);

async function executionIndexes(): Promise<string[]> {
  const { db } = migration;
  if (migration.dialect === "sqlite") {
    const rows = await sql<{ name: string }>`select name from sqlite_master
      where type = 'index' and tbl_name = 'executions' and sql is not null order by name`.execute(db);
    return rows.rows.map((row) => row.name);
  }
  const rows = await sql<{ name: string }>`select indexname as name from pg_indexes
    where tablename = 'executions' and indexname not like '%_pkey' order by indexname`.execute(db);
  return rows.rows.map((row) => row.name);
}

beforeAll(async () => {
  migration = await migrationUnderTest("2026-11-28-0026-webdriver-sessions");
  const { db } = migration;
  await storeOrganizationWithVersion(db, "org_a");
  await db
    .insertInto("clients")
    .values({
      id: "cl_1",
      organization_id: "org_a",
      role: "ci",
      secret_hash: "hash",
      created_at: at,
      disabled_at: null,
      tokens_not_before: null,
      name: null,
    })
    .execute();
  await db.insertInto("executions").values(execution("ex_1")).execute();
  await db.insertInto("device_runs").values(deviceRun("dr_1", "ex_1")).execute();
});
afterAll(async () => {
  await migration?.close();
});

it("keeps the executions and their runs, makes them runs, and lets a session have no plan nor version", async () => {
  const { db } = migration;
  const indexesBefore = await executionIndexes();
  // Before it, every execution has a plan.
  await expect(
    db
      .insertInto("executions")
      .values(execution("ex_x", { test_plan_id: null }))
      .execute(),
  ).rejects.toThrow();

  await migration.up();

  const kept = await db.selectFrom("executions").selectAll().execute();
  expect(kept).toEqual([{ ...execution("ex_1"), kind: "run", ...ciColumns() }]);
  expect(await executionIndexes()).toEqual(indexesBefore);
  expect(await db.selectFrom("device_runs").select(["id", "execution_id"]).execute()).toEqual([
    { id: "dr_1", execution_id: "ex_1" },
  ]);

  const session = execution("ex_2", {
    kind: "session",
    test_plan_id: null,
    app_version_id: null,
    package_name: null,
    version: null,
    status: "queued",
  });
  await db.insertInto("executions").values(session).execute();
  await db
    .insertInto("webdriver_sessions")
    .values({
      execution_id: "ex_2",
      organization_id: "org_a",
      client_id: "cl_1",
      state: "queued",
      idle_timeout_seconds: 90,
      max_duration_seconds: 1800,
      created_at: at,
    })
    .execute();
  // References still hold, to and from the rebuilt table.
  await expect(
    db.insertInto("device_runs").values(deviceRun("dr_x", "ex_nobody")).execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto("executions")
      .values(execution("ex_y", { app_version_id: "ver_nobody" }))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto("webdriver_sessions")
      .values({
        execution_id: "ex_nobody",
        organization_id: "org_a",
        client_id: "cl_1",
        state: "queued",
        idle_timeout_seconds: 90,
        max_duration_seconds: 1800,
        created_at: at,
      })
      .execute(),
  ).rejects.toThrow();
  await db.insertInto("device_runs").values(deviceRun("dr_2", "ex_2")).execute();
});

it("is undone only while no session execution is stored", async () => {
  const { db } = migration;
  await expect(migration.down()).rejects.toThrow(/executions of kind session are stored/);
  expect(await db.selectFrom("webdriver_sessions").select("execution_id").execute()).toHaveLength(1);

  await db.deleteFrom("webdriver_sessions").execute();
  await db.deleteFrom("device_runs").where("execution_id", "=", "ex_2").execute();
  await db.deleteFrom("executions").where("id", "=", "ex_2").execute();
  await migration.down();
  expect(await db.selectFrom("executions").selectAll().execute()).toEqual([
    { ...execution("ex_1"), ...ciColumns() },
  ]);
  await expect(
    db
      .insertInto("executions")
      .values(execution("ex_z", { version: null }))
      .execute(),
  ).rejects.toThrow();

  await migration.up();
});

/** Migration 0012's columns, null for these rows. */
function ciColumns() {
  return { ci_provider: null, ci_branch: null, ci_commit: null, ci_pull_request: null, ci_build_url: null };
}
