// A PostgreSQL database of a benchmark's own, created for one run and dropped when its scope closes.
import pg from "pg";
import type { CleanupScope } from "./cleanup.ts";

/** Where PostgreSQL is: a database to connect to while creating and dropping the benchmark's own. */
export const postgresAdminUrl =
  process.env.TESTBAY_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const prefix = "testbay_bench_";

export interface BenchDatabase {
  name: string;
  /** postgres://… of the new database. */
  url: string;
  /** PostgreSQL's version string. */
  version: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 5000 });
  // A connection terminated later (the server restarting) must not crash the runner.
  client.on("error", () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** PostgreSQL's version, or `{ reason }` when it does not answer at TESTBAY_BENCH_POSTGRES_URL (127.0.0.1 only). */
export async function probePostgres(): Promise<{ version: string } | { reason: string }> {
  const admin = new URL(postgresAdminUrl);
  if (admin.hostname !== "127.0.0.1") {
    return { reason: `TESTBAY_BENCH_POSTGRES_URL must be on 127.0.0.1, not ${admin.hostname}` };
  }
  try {
    return await withAdmin(async (client) => ({
      version:
        (await client.query<{ server_version: string }>("show server_version")).rows[0]?.server_version ??
        "?",
    }));
  } catch (error) {
    return {
      reason: `PostgreSQL does not answer at ${postgresAdminUrl} (set TESTBAY_BENCH_POSTGRES_URL, or start it): ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/**
 * Creates `testbay_bench_NAME_PID_xxxxxx` and drops it when `scope` closes. A run killed with SIGKILL cannot
 * drop its database, so databases left by benchmark processes that no longer exist are dropped first.
 * `{ reason }` when PostgreSQL does not answer at TESTBAY_BENCH_POSTGRES_URL (127.0.0.1 only).
 */
export async function createBenchDatabase(
  name: string,
  scope: CleanupScope,
): Promise<BenchDatabase | { reason: string }> {
  const admin = new URL(postgresAdminUrl);
  if (admin.hostname !== "127.0.0.1") {
    return { reason: `TESTBAY_BENCH_POSTGRES_URL must be on 127.0.0.1, not ${admin.hostname}` };
  }
  const database = `${prefix}${name}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let version: string;
  try {
    version = await withAdmin(async (client) => {
      const stale = await client.query<{ datname: string }>(
        "select datname from pg_database where datname like 'testbay\\_bench\\_%'",
      );
      for (const { datname } of stale.rows) {
        const pid = Number(/_(\d+)_[a-z0-9]+$/.exec(datname)?.[1]);
        if (pid > 0 && pid !== process.pid && !alive(pid)) {
          await client.query(`drop database if exists "${datname}" with (force)`);
        }
      }
      await client.query(`create database "${database}"`);
      return (
        (await client.query<{ server_version: string }>("show server_version")).rows[0]?.server_version ?? "?"
      );
    });
  } catch (error) {
    return {
      reason: `PostgreSQL does not answer at ${postgresAdminUrl} (set TESTBAY_BENCH_POSTGRES_URL, or start it): ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  scope.defer(() =>
    withAdmin((client) => client.query(`drop database if exists "${database}" with (force)`)),
  );
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${database}`;
  return { name: database, url: url.toString(), version };
}
