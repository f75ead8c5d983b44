// The query plan of a claim's SELECT, from the server's own repository code: LeasesRepo.claim runs once on
// an empty queue (so it takes nothing) while its statements are captured as Kysely compiles them; the
// SELECT is then run again under EXPLAIN once the queue is full.
import Database from "better-sqlite3";
import { Kysely, type LogEvent, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { Database as Schema } from "../../packages/server/src/db/schema.ts";
import { LeasesRepo } from "../../packages/server/src/features/agent/leases.repo.ts";
import { ResultsRepo } from "../../packages/server/src/features/executions/results.repo.ts";

export interface ClaimStatement {
  sql: string;
  parameters: unknown[];
}

export interface ClaimPlan {
  statement: ClaimStatement;
  /** The plan as the database prints it, one line each. */
  plan: string[];
  /** Why this plan does not scale with the queue (a full scan, a sort of every queued run…); empty when fine. */
  problems: string[];
}

export interface ClaimPlanInspector {
  /** Captures the claim's SELECT; call while no run is queued, or it claims one. */
  capture(organizationId: string): Promise<ClaimStatement>;
  explain(statement: ClaimStatement): Promise<ClaimPlan>;
  close(): Promise<void>;
}

type Captured = Array<{ sql: string; parameters: readonly unknown[] }>;

function logInto(captured: Captured) {
  return (event: LogEvent) => {
    if (event.level === "query") captured.push({ sql: event.query.sql, parameters: event.query.parameters });
  };
}

async function captureClaim(
  db: Kysely<Schema>,
  dialect: "sqlite" | "postgres",
  captured: Captured,
  organizationId: string,
): Promise<ClaimStatement> {
  captured.length = 0;
  const repo = new LeasesRepo(db, dialect, new ResultsRepo(db));
  const taken = await repo.claim(
    { organizationId, agentId: "bench-plan", devices: [], host: true, stepTypes: ["inspect"] },
    Date.now(),
    60_000,
  );
  if (taken) throw new Error("capturing the claim's SQL took a run: the queue was not empty");
  const select = captured.find((s) => /^select\b/i.test(s.sql) && /from "device_runs"/.test(s.sql));
  if (!select) throw new Error(`the claim sent no SELECT from device_runs: ${JSON.stringify(captured)}`);
  return { sql: select.sql, parameters: [...select.parameters] };
}

/** On the server's SQLite file, over a connection of its own. EXPLAIN QUERY PLAN: nothing runs. */
export function sqliteClaimPlans(file: string): ClaimPlanInspector {
  const sqlite = new Database(file);
  sqlite.pragma("busy_timeout = 5000");
  const captured: Captured = [];
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }), log: logInto(captured) });
  return {
    capture: (organizationId) => captureClaim(db, "sqlite", captured, organizationId),
    async explain(statement) {
      const rows = sqlite
        .prepare(`explain query plan ${statement.sql}`)
        .all(...statement.parameters) as Array<{
        detail: string;
      }>;
      const plan = rows.map((row) => row.detail);
      const problems: string[] = [];
      for (const line of plan) {
        if (/^SCAN device_runs\b/.test(line) && !/USING (COVERING )?INDEX/.test(line)) {
          problems.push(`full scan: ${line}`);
        }
        if (/USE TEMP B-TREE/.test(line)) problems.push(`sort of every queued run: ${line}`);
      }
      return { statement, plan, problems };
    },
    async close() {
      await db.destroy();
    },
  };
}

/**
 * On a pool of its own to `url`. EXPLAIN (ANALYZE, BUFFERS): the SELECT runs, and its FOR UPDATE locks the
 * run it finds until the EXPLAIN ends; take it while nothing else claims.
 */
export function postgresClaimPlans(url: string): ClaimPlanInspector {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on("error", () => {});
  const captured: Captured = [];
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }), log: logInto(captured) });
  return {
    capture: (organizationId) => captureClaim(db, "postgres", captured, organizationId),
    async explain(statement) {
      const result = await pool.query<{ "QUERY PLAN": string }>(
        `explain (analyze, buffers, timing off, summary off) ${statement.sql}`,
        statement.parameters,
      );
      const plan = result.rows.map((row) => row["QUERY PLAN"]);
      const problems: string[] = [];
      for (const line of plan) {
        if (/Seq Scan on device_runs\b/.test(line)) problems.push(`full scan: ${line.trim()}`);
        if (/^\s*(->\s*)?(Sort|Incremental Sort)\b/.test(line)) {
          problems.push(`sort of every queued run: ${line.trim()}`);
        }
      }
      return { statement, plan, problems };
    },
    close: () => db.destroy(),
  };
}

/** "Index Scan using device_runs_claim_idx" and the like, with rows a filter read and threw away. */
export function claimAccessPath(plan: ClaimPlan): string {
  const removed = plan.plan
    .map((line) => /Rows Removed by Filter: (\d+)/.exec(line)?.[1])
    .find((n) => n !== undefined);
  const paths = plan.plan
    .map((line) => line.trim().replace(/^->\s*/, ""))
    .filter((line) => /^(SEARCH|SCAN|USE TEMP)\b|Scan\b|^Sort\b/.test(line))
    .map((line) =>
      line
        .replace(/\s+\(cost=.*$/, "")
        .replace(/\s+\(actual .*$/, "")
        .replace(/ on device_runs( \w+)?$/, ""),
    );
  const path = paths.join(" + ") || plan.plan[0] || "?";
  return removed ? `${path} (${removed} rows removed by filter)` : path;
}

/** PostgreSQL: the buffers the plan's top node touched (hit + read); undefined for SQLite's plans. */
export function planBuffers(plan: ClaimPlan): number | undefined {
  const line = plan.plan.find((l) => /Buffers: shared/.test(l));
  if (!line) return undefined;
  const hit = Number(/hit=(\d+)/.exec(line)?.[1] ?? 0);
  const read = Number(/read=(\d+)/.exec(line)?.[1] ?? 0);
  return hit + read;
}
