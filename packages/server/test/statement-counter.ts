/**
 * Counts the statements this process sends to its databases while it is on, where they leave the process, as
 * bench/lib/claim-statement-counter.mjs does in a benchmark's server: PostgreSQL, each pg Client#query (BEGIN
 * and COMMIT included); SQLite, each run/all/get/iterate of a prepared statement and each exec or pragma. For
 * in-process test servers (harness.ts): a test reads the count around one request.
 */
import Sqlite from "better-sqlite3";
import pg from "pg";

export interface StatementCounter {
  /** Statements sent since the counter was started. */
  count(): number;
  /** Puts the drivers' methods back. */
  stop(): void;
}

export function countStatements(): StatementCounter {
  let count = 0;
  const restores: Array<() => void> = [];
  const wrap = (target: Record<string, unknown>, method: string) => {
    const original = target[method] as (...args: unknown[]) => unknown;
    target[method] = function counted(this: unknown, ...args: unknown[]) {
      count++;
      return original.apply(this, args);
    };
    restores.push(() => {
      target[method] = original;
    });
  };
  wrap(pg.Client.prototype as unknown as Record<string, unknown>, "query");
  const probe = new Sqlite(":memory:");
  const statement = Object.getPrototypeOf(probe.prepare("select 1")) as Record<string, unknown>;
  probe.close();
  for (const method of ["run", "all", "get", "iterate"]) wrap(statement, method);
  for (const method of ["exec", "pragma"])
    wrap(Sqlite.prototype as unknown as Record<string, unknown>, method);
  return {
    count: () => count,
    stop: () => {
      for (const restore of restores.reverse()) restore();
    },
  };
}
