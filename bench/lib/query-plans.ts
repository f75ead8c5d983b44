// The query plans of GET /v1/executions, from the server's own repository code: its statements are captured
// as Kysely compiles them (the same SQL and parameters the server sends) and run again under EXPLAIN.
import type Database from "better-sqlite3";
import { Kysely, type LogEvent, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { Database as Schema } from "../../packages/server/src/db/schema.ts";
import {
  type ExecutionFilter,
  ExecutionsRepo,
} from "../../packages/server/src/features/executions/executions.repo.ts";
import { ResultsRepo } from "../../packages/server/src/features/executions/results.repo.ts";
import type { Position } from "../../packages/server/src/http/pagination.ts";

export interface ListCall {
  label: string;
  filter: ExecutionFilter;
  limit: number;
  after?: Position;
}

export interface StatementPlan {
  sql: string;
  parameters: unknown[];
  /** The plan as the database prints it, one line each. */
  plan: string[];
  /** Why this plan does not scale with the table (a full scan, a sort of every row…); empty when fine. */
  problems: string[];
}

export interface CallPlan {
  label: string;
  /** The columns the call's filter compares with `=` (besides organization_id). */
  columns: string[];
  statements: StatementPlan[];
}

export interface PlanInspector {
  explain(organizationId: string, calls: ListCall[]): Promise<CallPlan[]>;
  close(): Promise<void>;
}

/** The columns each list filter compares with `=`. */
const filterColumns: Record<keyof ExecutionFilter, string> = {
  testPlanId: "test_plan_id",
  packageName: "package_name",
  version: "version",
  status: "status",
  branch: "ci_branch",
  commit: "ci_commit",
};

function equalityColumns(filter: ExecutionFilter): string[] {
  return (Object.keys(filter) as Array<keyof ExecutionFilter>)
    .filter((key) => filter[key] !== undefined)
    .map((key) => filterColumns[key]);
}

function inspector(
  db: Kysely<Schema>,
  captured: Array<{ sql: string; parameters: readonly unknown[] }>,
  explain: (sql: string, parameters: unknown[], columns: string[]) => Promise<StatementPlan>,
  close: () => Promise<void>,
): PlanInspector {
  const repo = new ExecutionsRepo(db, new ResultsRepo(db));
  return {
    async explain(organizationId, calls) {
      const plans: CallPlan[] = [];
      for (const call of calls) {
        captured.length = 0;
        await repo.list(organizationId, call.filter, call.limit, call.after);
        const statements: StatementPlan[] = [];
        for (const { sql, parameters } of [...captured]) {
          // The filters apply to the executions query; device runs are looked up by execution id.
          const columns = /from "executions"/.test(sql) ? equalityColumns(call.filter) : [];
          statements.push(await explain(sql, [...parameters], columns));
        }
        plans.push({ label: call.label, columns: equalityColumns(call.filter), statements });
      }
      return plans;
    },
    close,
  };
}

function capture(captured: Array<{ sql: string; parameters: readonly unknown[] }>) {
  return (event: LogEvent) => {
    if (event.level === "query") {
      captured.push({ sql: event.query.sql, parameters: event.query.parameters });
    }
  };
}

/** On a better-sqlite3 connection the caller owns (and closes). */
export function sqlitePlans(sqlite: Database.Database): PlanInspector {
  const captured: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }), log: capture(captured) });
  return inspector(
    db,
    captured,
    async (sql, parameters, columns) => {
      const rows = sqlite.prepare(`explain query plan ${sql}`).all(...parameters) as Array<{
        id: number;
        parent: number;
        detail: string;
      }>;
      // Indent each step under its parent, as the sqlite3 shell does.
      const depth = new Map<number, number>([[0, 0]]);
      const plan = rows.map((row) => {
        const level = (depth.get(row.parent) ?? 0) + 1;
        depth.set(row.id, level);
        return `${"  ".repeat(level - 1)}${row.detail}`;
      });
      const problems: string[] = [];
      for (const line of plan) {
        // SCAN without an index reads the whole table; a temp B-tree sorts every matching row.
        if (/^\s*SCAN (executions|device_runs)\b/.test(line) && !/USING (COVERING )?INDEX/.test(line)) {
          problems.push(`full scan: ${line.trim()}`);
        }
        if (/USE TEMP B-TREE/.test(line)) problems.push(`sort: ${line.trim()}`);
      }
      // A filter column missing from the index search is checked row by row, after a table lookup each.
      const search = plan.find((line) => /^\s*SEARCH executions\b/.test(line)) ?? "";
      const condition = /\(([^()]*(\([^()]*\)[^()]*)*)\)\s*$/.exec(search)?.[1] ?? "";
      for (const column of columns) {
        if (!new RegExp(`\\b${column}=`).test(condition)) {
          problems.push(`${column} is checked row by row, outside the index: ${search.trim()}`);
        }
      }
      return { sql, parameters, plan, problems };
    },
    // Kysely's destroy() would close the caller's connection.
    async () => {},
  );
}

/** On a pool of its own to `url`, closed by close(). EXPLAIN ANALYZE: the statements run, reads only. */
export function postgresPlans(url: string): PlanInspector {
  const captured: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }), log: capture(captured) });
  return inspector(
    db,
    captured,
    async (sql, parameters, columns) => {
      const result = await pool.query<{ "QUERY PLAN": string }>(
        `explain (analyze, buffers, timing off, summary off) ${sql}`,
        parameters,
      );
      const plan = result.rows.map((row) => row["QUERY PLAN"]);
      const problems: string[] = [];
      for (const line of plan) {
        if (/Seq Scan on (executions|device_runs)\b/.test(line)) problems.push(`full scan: ${line.trim()}`);
        if (/^\s*(->\s*)?(Sort|Incremental Sort)\b/.test(line)) problems.push(`sort: ${line.trim()}`);
      }
      // A filter column missing from the index condition is checked row by row, on each heap tuple.
      const conditions = plan.filter((line) => /^\s*Index Cond:/.test(line)).join(" ");
      const removed = plan.find((line) => /Rows Removed by Filter:/.test(line))?.trim();
      for (const column of columns) {
        if (!new RegExp(`\\b${column} = `).test(conditions)) {
          problems.push(
            `${column} is checked row by row, outside the index${removed ? ` (${removed})` : ""}`,
          );
        }
      }
      return { sql, parameters, plan, problems };
    },
    () => db.destroy(),
  );
}

/**
 * "Index Scan Backward using executions_org_created_idx" and the like: the access path of a plan, with
 * PostgreSQL's count of rows read and thrown away by a filter.
 */
export function accessPath(plan: StatementPlan): string {
  const removed = plan.plan
    .map((line) => /Rows Removed by Filter: (\d+)/.exec(line)?.[1])
    .find((n) => n !== undefined);
  const paths = plan.plan
    .map((line) => line.trim().replace(/^->\s*/, ""))
    .filter((line) => /^(SEARCH|SCAN)\b|Scan\b/.test(line))
    .map((line) =>
      line
        .replace(/\s+\(cost=.*$/, "")
        .replace(/\s+\(actual .*$/, "")
        .replace(/ on (executions|device_runs)( \w+)?$/, ""),
    );
  const path = paths.join(" + ") || plan.plan[0] || "?";
  return removed ? `${path} (${removed} rows removed by filter)` : path;
}
