// The statement behind GET /metrics' shared gauges, from the server's own code (features/metrics/shared-state.ts
// readSharedState): timed alone from this process, and run again under EXPLAIN ANALYZE, to tell the query's share of
// a scrape from the rest (prom-client's serialization, the HTTP route) and to show its plan when it is slow.
import { Kysely, type LogEvent, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database as Schema } from "../../packages/server/src/db/schema.ts";
import { readSharedState } from "../../packages/server/src/features/metrics/shared-state.ts";
import { type Series, summarize } from "./sequential.ts";

export interface SharedStateProbe {
  /** Calls readSharedState `count` times one after the other (bounded by `maxSeconds`); ms of each. */
  time(count: number, maxSeconds: number): Promise<Pick<Series, "times" | "p50Ms" | "p99Ms" | "maxMs">>;
  /** The statement's plan under EXPLAIN (ANALYZE, BUFFERS), one line each; reads only. */
  explain(): Promise<{ sql: string; plan: string[]; executionMs: number | undefined }>;
  close(): Promise<void>;
}

/** On a pool of one connection to `url`, closed by close(). */
export function sharedStateProbe(url: string): SharedStateProbe {
  const captured: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const log = (event: LogEvent) => {
    if (event.level === "query") captured.push({ sql: event.query.sql, parameters: event.query.parameters });
  };
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }), log });
  return {
    async time(count, maxSeconds) {
      const times: number[] = [];
      // The first read opens the pool's connection: not part of the statement's time.
      await readSharedState(db, Date.now());
      const deadline = performance.now() + maxSeconds * 1000;
      for (let i = 0; i < count && performance.now() < deadline; i++) {
        const started = performance.now();
        await readSharedState(db, Date.now());
        times.push(performance.now() - started);
      }
      captured.length = 0;
      return { times, ...summarize(times) };
    },
    async explain() {
      captured.length = 0;
      await readSharedState(db, Date.now());
      const statement = captured[0];
      if (statement === undefined) throw new Error("readSharedState sent no statement");
      const result = await pool.query<{ "QUERY PLAN": string }>(
        `explain (analyze, buffers) ${statement.sql}`,
        [...statement.parameters],
      );
      const plan = result.rows.map((row) => row["QUERY PLAN"]);
      const execution = plan.map((line) => /Execution Time: ([\d.]+) ms/.exec(line)?.[1]).find(Boolean);
      return {
        sql: statement.sql,
        plan,
        executionMs: execution === undefined ? undefined : Number(execution),
      };
    },
    close: () => db.destroy(),
  };
}
