import { createHash } from "node:crypto";
import type pg from "pg";

/**
 * Kysely sends every statement unnamed, so PostgreSQL parses and plans it anew each time. For the agents'
 * hot path that costs more than running it: measured with pg_stat_statements during `npm run bench -- claim`,
 * the end of an attempt plans in 0.57 ms and runs in 0.27 ms, the lease read plans in 0.19 ms and runs in
 * 0.04 ms. Named statements are parsed once per connection, and after five runs PostgreSQL may keep a
 * generic plan (plan_cache_mode auto), which it does only when that plan is no costlier than planning afresh.
 *
 * Which statements: like pgjdbc's prepareThreshold, a statement text is prepared on a connection the
 * `minUses`-th time that connection runs it, so texts run once (a batch with a list of values of its own
 * length, a migration) never are; and at most `maxPerConnection` texts per connection, so the memory the
 * server keeps for them stays bounded whatever texts the service sends (no eviction: the first texts to be
 * run often are the hot ones, and they stay).
 *
 * PgBouncer in transaction mode keeps named statements only from 1.21 on (`max_prepared_statements` > 0);
 * behind an older one, set TESTBAY_DATABASE_PREPARED_STATEMENTS=false.
 */
export interface PreparedStatementPolicy {
  minUses: number;
  maxPerConnection: number;
}

export const defaultPreparedStatementPolicy: PreparedStatementPolicy = { minUses: 5, maxPerConnection: 100 };

/** Statement uses counted per text before it is prepared: the counts are dropped once this many texts are seen. */
const maxCountedTexts = 1000;

interface ConnectionState {
  uses: Map<string, number>;
  prepared: Map<string, string>;
  /** Texts PostgreSQL refused to run prepared again (see below): sent unnamed from then on. */
  unpreparable: Set<string>;
}

/**
 * "cached plan must not change result type": a migration (run by a newer instance during a rolling upgrade)
 * changed the columns a prepared `select *` returns. That statement fails once; it is sent unnamed after.
 */
const resultTypeChanged = (error: unknown) => (error as { code?: unknown } | null)?.code === "0A000";

const states = new WeakMap<pg.PoolClient, ConnectionState>();

/**
 * Makes `client.query(text, values)` name the statement once its text qualifies (see above). Idempotent: the
 * pool hands the same client out many times and it is wrapped once. Other call shapes (a config object, a
 * cursor) pass through unchanged.
 */
export function preparingStatements(
  client: pg.PoolClient,
  policy: PreparedStatementPolicy = defaultPreparedStatementPolicy,
): pg.PoolClient {
  if (states.has(client)) return client;
  const state: ConnectionState = { uses: new Map(), prepared: new Map(), unpreparable: new Set() };
  states.set(client, state);
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const named = (text: string): string | undefined => {
    const name = state.prepared.get(text);
    if (name !== undefined || state.prepared.size >= policy.maxPerConnection) return name;
    if (state.unpreparable.has(text)) return undefined;
    const uses = (state.uses.get(text) ?? 0) + 1;
    if (uses < policy.minUses) {
      if (state.uses.size >= maxCountedTexts) state.uses.clear();
      state.uses.set(text, uses);
      return undefined;
    }
    state.uses.delete(text);
    const prepared = `testbay_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
    state.prepared.set(text, prepared);
    return prepared;
  };
  // pg's query() has many overloads; only (text, values) is rewritten, the rest go through as they came.
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text !== "string" || args.length > 2) return query(...args);
    const name = named(text);
    if (name === undefined) return query(...args);
    return (query({ name, text, values }) as Promise<unknown>).catch((error: unknown) => {
      if (resultTypeChanged(error)) {
        state.prepared.delete(text);
        state.unpreparable.add(text);
      }
      throw error;
    });
  };
  return client;
}
