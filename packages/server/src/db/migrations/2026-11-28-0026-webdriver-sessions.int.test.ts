import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Kysely, Migrator, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/harness.ts";
import { type DatabaseHandle, openDatabase } from "../kysely.ts";
import { migrations } from "./index.ts";

/**
 * Migration 0026 lets an execution be a WebDriver session (kind, no plan, no version) and adds
 * webdriver_sessions, on both databases, keeping the executions stored before it, their device runs' references
 * and the indexes of executions (SQLite rebuilds the table).
 */

let dir: string;
let database: TestDatabase;
let handle: DatabaseHandle;
// The tables as they were before migration 0026: untyped on purpose.
let db: Kysely<any>;
let migrator: Migrator;

const before = "2026-11-28-0025-people-per-organization";
const after = "2026-11-28-0026-webdriver-sessions";
const at = "2026-01-01T00:00:00.000Z";

const execution = (id: string, overrides: Record<string, unknown> = {}) => ({
  id,
  organization_id: "org_a",
  test_plan_id: "tp_1",
  app_version_id: "ver_1",
  package_name: "com.example.basic",
  version: "1.0",
  status: "passed",
  plan: "{}",
  env: "{}",
  summary: "{}",
  cancel_requested: 0,
  triggered_by: "cl_1",
  created_at: at,
  started_at: null,
  finished_at: null,
  ...overrides,
});

const deviceRun = (id: string, executionId: string) => ({
  id,
  execution_id: executionId,
  position: 0,
  status: "passed",
  attempt: 1,
  created_at: at,
});

async function executionIndexes(): Promise<string[]> {
  if (database.url.startsWith("sqlite:")) {
    const rows = await sql<{ name: string }>`select name from sqlite_master
      where type = 'index' and tbl_name = 'executions' and sql is not null order by name`.execute(db);
    return rows.rows.map((row) => row.name);
  }
  const rows = await sql<{ name: string }>`select indexname as name from pg_indexes
    where tablename = 'executions' and indexname not like '%_pkey' order by indexname`.execute(db);
  return rows.rows.map((row) => row.name);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-0026-"));
  database = await createTestDatabase(dir);
  handle = openDatabase(database.url);
  db = handle.db;
  migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateTo(before);
  if (error) throw error;
  await db.insertInto("organizations").values({ id: "org_a", name: "acme", created_at: at }).execute();
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
  await db
    .insertInto("apps")
    .values({
      id: "app_1",
      organization_id: "org_a",
      package_name: "com.example.basic",
      package_name_folded: "com.example.basic",
      platform: "android",
      display_name: null,
      created_at: at,
    })
    .execute();
  await db
    .insertInto("app_versions")
    .values({
      id: "ver_1",
      app_id: "app_1",
      version: "1.0",
      size_bytes: 1,
      sha256: "00",
      blob_key: "blob",
      binary: "{}",
      created_at: at,
      deleted_at: null,
    })
    .execute();
  await db.insertInto("executions").values(execution("ex_1")).execute();
  await db.insertInto("device_runs").values(deviceRun("dr_1", "ex_1")).execute();
});
afterAll(async () => {
  await handle?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

it("keeps the executions and their runs, makes them runs, and lets a session have no plan nor version", async () => {
  const indexesBefore = await executionIndexes();
  // Before it, every execution has a plan.
  await expect(
    db
      .insertInto("executions")
      .values(execution("ex_x", { test_plan_id: null }))
      .execute(),
  ).rejects.toThrow();

  const { error } = await migrator.migrateTo(after);
  if (error) throw error;

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
  const refused = await migrator.migrateTo(before);
  expect(refused.error).toBeDefined();
  expect(await db.selectFrom("webdriver_sessions").select("execution_id").execute()).toHaveLength(1);

  await db.deleteFrom("webdriver_sessions").execute();
  await db.deleteFrom("device_runs").where("execution_id", "=", "ex_2").execute();
  await db.deleteFrom("executions").where("id", "=", "ex_2").execute();
  const down = await migrator.migrateTo(before);
  if (down.error) throw down.error;
  expect(await db.selectFrom("executions").selectAll().execute()).toEqual([
    { ...execution("ex_1"), ...ciColumns() },
  ]);
  await expect(
    db
      .insertInto("executions")
      .values(execution("ex_z", { version: null }))
      .execute(),
  ).rejects.toThrow();

  const up = await migrator.migrateTo(after);
  if (up.error) throw up.error;
});

/** Migration 0012's columns, null for these rows. */
function ciColumns() {
  return { ci_provider: null, ci_branch: null, ci_commit: null, ci_pull_request: null, ci_build_url: null };
}
