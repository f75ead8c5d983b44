// The query plan of a claim's SELECT, from the server's own code: the SELECT inside the claim statement
// (features/device-runs nextRun, as claim-query.ts sends it, with PostgreSQL's FOR UPDATE SKIP LOCKED) is
// compiled by Kysely for the bench organization, then run under EXPLAIN once the queue is full.
import Database from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import type { Database as Schema } from "../../packages/server/src/db/schema.ts";
import { nextRun } from "../../packages/server/src/features/device-runs/index.ts";

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
  /** The claim's SELECT for the organization, as the server compiles it (nothing runs). */
  capture(organizationId: string): Promise<ClaimStatement>;
  explain(statement: ClaimStatement): Promise<ClaimPlan>;
  close(): Promise<void>;
}

async function captureClaim(
  db: Kysely<Schema>,
  dialect: "sqlite" | "postgres",
  organizationId: string,
): Promise<ClaimStatement> {
  const select = nextRun({
    organizationId,
    agentId: "bench-plan",
    devices: [],
    host: true,
    stepTypes: ["inspect"],
  });
  if (!select) throw new Error("the bench agent offers nothing a claim could take");
  const compiled = (dialect === "postgres" ? sql`${select} for update skip locked` : select).compile(db);
  return { sql: compiled.sql, parameters: [...compiled.parameters] };
}

/** On the server's SQLite file, over a connection of its own. EXPLAIN QUERY PLAN: nothing runs. */
export function sqliteClaimPlans(file: string): ClaimPlanInspector {
  const sqlite = new Database(file);
  sqlite.pragma("busy_timeout = 5000");
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    capture: (organizationId) => captureClaim(db, "sqlite", organizationId),
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
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  return {
    capture: (organizationId) => captureClaim(db, "postgres", organizationId),
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
