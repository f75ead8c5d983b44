// The opening the Testbay benchmarks share (auth, claim, trigger, upload): a Testbay server in a process of its
// own (bench/servers/testbay.ts) on a data dir of its own, and the SDK (@testbay/client) as its ci client with a
// token. What a benchmark measures it still sends itself (autocannon, SequentialClient): the SDK only sets up.
import { rm } from "node:fs/promises";
import path from "node:path";
import { Testbay } from "@testbay/client";
import type { TestbayReady } from "../servers/testbay.ts";
import type { CleanupScope } from "./cleanup.ts";
import { benchDir } from "./paths.ts";
import { type BenchDatabase, createBenchDatabase } from "./postgres.ts";
import {
  type ReadyMessage,
  type ServerProcess,
  startServerProcess,
  testbayNodeFlags,
} from "./server-process.ts";

/** High enough that the limiter never refuses during a run, which it still runs for on every request. */
export const unlimited = "1000000000";

export type Dialect = "sqlite" | "postgres";

export interface TestbayOpeningOptions {
  /** Names the data dir, the stdout log and the PostgreSQL database, each unique within `dir`. */
  name: string;
  /** The run's temp dir. */
  dir: string;
  scope: CleanupScope;
  /** Pin the server to this CPU. */
  cpu?: number | undefined;
  /**
   * Sets TESTBAY_DATABASE_URL: a SQLite file in the data dir, or a PostgreSQL database of this run's. Left
   * out: the server's default (SQLite in the data dir).
   */
  dialect?: Dialect;
  /** More variables for the server, over the defaults (log level warn, the ci client's limits raised). */
  env?: Record<string, string>;
  /** Node flags after `testbay-server`'s own (testbayNodeFlags), e.g. a module preloaded with --import. */
  nodeFlags?: readonly string[];
  /**
   * How long the server may take to say it is ready (startServerProcess's 30 s when left out): longer for a
   * benchmark on PostgreSQL on a loaded machine, whose start (source transformed by tsx, migrations on a fresh
   * database) can outlast it.
   */
  readyTimeoutMs?: number;
}

export interface TestbayOpening {
  server: ServerProcess<TestbayReady & ReadyMessage>;
  origin: string;
  /** The SDK as the server's ci client. Client-side pacing is off: the server's own limits are raised. */
  ci: Testbay;
  /** The ci client's token, for the requests a benchmark sends itself. */
  token: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Where the server logs (its stdout). */
  stdoutFile: string;
}

/** Starts Testbay and gets the ci client's token; the server, its data dir and database go when `scope` closes. */
export async function openTestbay(options: TestbayOpeningOptions): Promise<TestbayOpening> {
  const { name, dir, scope } = options;
  const dataDir = path.join(dir, name);
  scope.defer(() => rm(dataDir, { recursive: true, force: true }));
  const databaseUrl = await databaseUrlFor(options, dataDir);
  const stdoutFile = path.join(dir, `${name}.stdout.log`);
  const server = await startServerProcess<TestbayReady & ReadyMessage>(
    {
      label: `testbay (${name})`,
      entry: path.join(benchDir, "servers", "testbay.ts"),
      nodeFlags: [...testbayNodeFlags, ...(options.nodeFlags ?? [])],
      cpu: options.cpu,
      stdoutFile,
      ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
      env: {
        TESTBAY_DATA_DIR: dataDir,
        ...(databaseUrl === undefined ? {} : { TESTBAY_DATABASE_URL: databaseUrl }),
        TESTBAY_HOST: "127.0.0.1",
        TESTBAY_PORT: "0",
        TESTBAY_LOG_LEVEL: "warn",
        TESTBAY_RATE_LIMIT_BURST: unlimited,
        TESTBAY_RATE_LIMIT_PER_SECOND: unlimited,
        ...options.env,
      },
    },
    scope,
  );
  const origin = `http://127.0.0.1:${server.ready.port}`;
  const ci = sdkFor(origin, server.ready, server.ready.credentials);
  const token = await ci.accessToken();
  return { server, origin, ci, token, dataDir, databaseUrl, stdoutFile };
}

/** The SDK as one of the server's clients (the ci client, or one a benchmark made, such as an agent). */
export function sdkFor(
  origin: string,
  ready: { audience: string },
  credentials: { client_id: string; client_secret: string },
): Testbay {
  return new Testbay({
    baseUrl: `${origin}/v1`,
    clientId: credentials.client_id,
    clientSecret: credentials.client_secret,
    audience: ready.audience,
    pacing: false,
  });
}

async function databaseUrlFor(options: TestbayOpeningOptions, dataDir: string): Promise<string | undefined> {
  if (options.dialect === undefined) return undefined;
  if (options.dialect === "sqlite") return `sqlite:${path.join(dataDir, "testbay.db")}`;
  const database: BenchDatabase | { reason: string } = await createBenchDatabase(
    options.name.replace(/\W/g, "_"),
    options.scope,
  );
  if ("reason" in database) throw new Error(database.reason);
  return database.url;
}
