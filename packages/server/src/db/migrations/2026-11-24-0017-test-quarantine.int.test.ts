import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Kysely, Migrator } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/harness.ts";
import { testId } from "../../features/tests/test-id.ts";
import { type DatabaseHandle, openDatabase } from "../kysely.ts";
import { migrations } from "./index.ts";

/**
 * Migration 0017 gives the test cases stored before it their test's id, computed as GET /executions/{id}/tests
 * computes it, on both databases: names of any length and script, the same names in two plans, many tests.
 */

let dir: string;
let database: TestDatabase;
let handle: DatabaseHandle;
// The tables as they were before migration 0017: untyped on purpose.
let db: Kysely<any>;
let migrator: Migrator;

const before = "2026-11-24-0016-user-last-sign-in";
const at = "2026-01-01T00:00:00.000Z";

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-0017-"));
  database = await createTestDatabase(dir);
  handle = openDatabase(database.url);
  db = handle.db;
  migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateTo(before);
  if (error) throw error;
});
afterAll(async () => {
  await handle?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** An execution of `plan` with one device run whose attempt 1 reported `names` ([classname, name]). */
async function reported(plan: string, execution: string, names: Array<[string, string]>) {
  await db
    .insertInto("executions")
    .values({
      id: execution,
      organization_id: "org_1",
      test_plan_id: plan,
      app_version_id: "ver_1",
      package_name: "com.example.basic",
      version: "1.0",
      status: "passed",
      plan: "{}",
      env: "{}",
      summary: "{}",
      triggered_by: "cl_1",
      created_at: at,
    })
    .execute();
  await db
    .insertInto("device_runs")
    .values({
      id: `dr_${execution}`,
      execution_id: execution,
      position: 0,
      status: "passed",
      attempt: 1,
      created_at: at,
    })
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
  await db.insertInto("organizations").values({ id: "org_1", name: "acme", created_at: at }).execute();
  await db
    .insertInto("apps")
    .values({
      id: "app_1",
      organization_id: "org_1",
      package_name: "com.example.basic",
      package_name_folded: "com.example.basic",
      platform: "android",
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
      sha256: "0",
      blob_key: "b",
      binary: "{}",
      created_at: at,
    })
    .execute();
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

  const { error } = await migrator.migrateTo("2026-11-24-0017-test-quarantine");
  if (error) throw error;

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
  const down = await migrator.migrateTo(before);
  if (down.error) throw down.error;
  const tables = await db.introspection.getTables();
  expect(tables.map((table) => table.name)).not.toContain("test_quarantines");
  const testCases = tables.find((table) => table.name === "test_cases");
  expect(testCases?.columns.map((column) => column.name)).not.toContain("test_id");
  const up = await migrator.migrateTo("2026-11-24-0017-test-quarantine");
  if (up.error) throw up.error;
  const missing = await db.selectFrom("test_cases").select("seq").where("test_id", "is", null).execute();
  expect(missing).toEqual([]);
});
