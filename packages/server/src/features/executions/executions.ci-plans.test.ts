import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type PlanInspector, sqlitePlans } from "../../../../../bench/lib/query-plans.ts";
import { migrateToLatest, openDatabase } from "../../db/kysely.ts";

// GET /executions?branch=&commit= must page from an index like every other list filter: no sort of every
// matching row and no row-by-row check of a filter column, whatever the table's size (bench/lib/query-plans.ts).
let dir: string;
let sqlite: Database.Database;
let inspector: PlanInspector;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-ci-plans-"));
  const file = path.join(dir, "testbay.db");
  const handle = openDatabase(`sqlite:${file}`);
  await migrateToLatest(handle.db);
  await handle.close();
  sqlite = new Database(file);
  inspector = sqlitePlans(sqlite);
});
afterAll(async () => {
  sqlite.close();
  await rm(dir, { recursive: true, force: true });
});

it.each([{ branch: "main" }, { commit: "3f2a9c1e" }, { branch: "main", commit: "3f2a9c1e" }])(
  "lists executions filtered by %o from an index, in order",
  async (filter) => {
    const calls = await inspector.explain("org_1", [
      { label: "first page", filter, limit: 50 },
      { label: "next page", filter, limit: 50, after: { createdAt: "2026-01-01T00:00:00.000Z", id: "ex_1" } },
    ]);
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      const executions = call.statements.find((s) => /from "executions"/.test(s.sql));
      expect(executions?.plan.join("\n"), call.label).toMatch(/executions_org_ci_/);
      expect(executions?.problems, call.label).toEqual([]);
    }
  },
);
