import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { buildApp } from "../src/app.ts";
import type { AppOptions } from "../src/app-options.ts";
import { ManualClock } from "../src/clock.ts";
import { type Config, loadConfig } from "../src/config.ts";
import type { ClientRole } from "../src/db/schema.ts";
import type { IssuedCredentials } from "../src/features/clients/index.ts";
import { copyMigratedSqlite, postgresTemplate } from "./migrated-template.ts";
import { startRoundRobinProxy } from "./round-robin-proxy.ts";
import { startS3Server } from "./s3-server.ts";

/** Which database the integration suite runs against: set per Vitest project (see vitest.config.ts). */
export const testDatabase = process.env.TESTBAY_TEST_DB === "postgres" ? "postgres" : "sqlite";

const postgresAdminUrl = process.env.TESTBAY_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh database for one test file: a SQLite file in a temp dir, or a new PostgreSQL database; of the
 * project's kind (TESTBAY_TEST_DB) unless a test that is about one of them names it. Empty, or with every
 * migration applied (`migrated`, copied from a template: migrated-template.ts).
 */
export async function createTestDatabase(
  dir: string,
  kind: "sqlite" | "postgres" = testDatabase,
  { migrated = false }: { migrated?: boolean } = {},
): Promise<TestDatabase> {
  if (kind === "sqlite") {
    const file = path.join(dir, "testbay.db");
    if (migrated) {
      await copyMigratedSqlite(file);
      // As private as the server keeps its data dir's files (a looser one gets a warning at start).
      await chmod(file, 0o600);
    }
    return { url: `sqlite:${file}`, drop: async () => {} };
  }
  const name = `testbay_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL does not answer at ${postgresAdminUrl} (set TESTBAY_TEST_POSTGRES_URL, or start it: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start): ${String(error)}`,
    );
  }
  const template = migrated ? await postgresTemplate(admin, postgresAdminUrl) : undefined;
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  // A test database need not survive a crash of PostgreSQL: commits do not wait for the disk.
  await admin.query(`ALTER DATABASE ${name} SET synchronous_commit TO off`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresAdminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface TestServer {
  app: FastifyInstance;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  config: Config;
  clock: ManualClock;
  /** Every log line the server wrote, as text. */
  logs: string[];
  /** The API instances behind `baseUrl`: one, or two in the scaled configuration (`app` is the first). */
  instances: TestServer[];
  /** Creates a client in `org` (created if missing) straight in the database, as the admin CLI would. */
  createClient(org: string, role: ClientRole): Promise<IssuedCredentials>;
  /** Gets a token for the client over HTTP. */
  token(credentials: IssuedCredentials): Promise<string>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** TESTBAY_* variables on top of the test defaults. */
  env?: Record<string, string>;
  /** Runs before the server listens: tests add routes here (for example one that throws). */
  beforeListen?: (app: FastifyInstance) => void | Promise<void>;
  /** Another server's database and data dir, to run two instances on one store. */
  shareWith?: TestServer;
  /** A clock to share with another server; a new one by default. */
  clock?: ManualClock;
  /** See AppOptions.claimPollIntervalMs. */
  claimPollIntervalMs?: number;
  /** See AppOptions.webhookBackstopMs. */
  webhookBackstopMs?: AppOptions["webhookBackstopMs"];
  /** See AppOptions.rateLimitKeySlackMs. */
  rateLimitKeySlackMs?: number;
  /** Listen on this port (0, the default, picks a free one): with shareWith, a restart of that server. */
  port?: number;
  /** See AppOptions.channel. */
  channel?: AppOptions["channel"];
}

/**
 * The scaled configuration (vitest project `scaled`): every test server is two API instances on one
 * PostgreSQL database and shared stores, behind a round-robin proxy that `baseUrl` points at, so the
 * whole suite runs with its requests spread over both.
 */
export const scaledSuite = process.env.TESTBAY_TEST_SCALED === "true";

/** The shared rate limiter of the scaled configuration. */
const scaledRedisUrl = process.env.TESTBAY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A real server on a real port, with its own data dir, database and a clock that moves only when told. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  if (!scaledSuite || options.shareWith) return startOneServer(options);
  // Each test server gets its own S3 endpoint (s3rver, in this process) and shares the machine's Redis.
  const s3 = await startS3Server();
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
  const env = {
    TESTBAY_STORAGE_URL: s3.storageUrl,
    TESTBAY_REDIS_URL: scaledRedisUrl,
    // The limits' tests count every admission: on a loaded 2-core CI a Redis answer can outlast the default
    // 200 ms, and the request would be let through (fail open), which is right in production but not a count.
    TESTBAY_REDIS_COMMAND_TIMEOUT_MS: "10000",
    ...options.env,
  };
  const first = await startOneServer({ ...options, env });
  const second = await startOneServer({
    ...options,
    env,
    shareWith: first,
    clock: first.clock,
    logs: first.logs,
  });
  const proxy = await startRoundRobinProxy(
    [first, second].map((s) => ({ host: "127.0.0.1", port: Number(new URL(s.origin).port) })),
  );
  return {
    ...first,
    origin: proxy.origin,
    baseUrl: `${proxy.origin}/v1`,
    instances: [first, second],
    async close() {
      await proxy.close();
      await second.close();
      await first.close();
      await s3.close();
    },
  };
}

async function startOneServer(options: TestServerOptions & { logs?: string[] }): Promise<TestServer> {
  const shared = options.shareWith;
  const dir = shared ? shared.config.dataDir : await mkdtemp(path.join(tmpdir(), "testbay-test-"));
  const database = shared ? undefined : await createTestDatabase(dir, testDatabase, { migrated: true });
  const config = loadConfig({
    TESTBAY_DATA_DIR: dir,
    TESTBAY_DATABASE_URL: shared ? shared.config.databaseUrl : database?.url,
    TESTBAY_PORT: "0",
    TESTBAY_LOG_LEVEL: "info",
    // Tests that want the in-process agent turn it on; the others claim runs themselves.
    TESTBAY_LOCAL_AGENT: "false",
    ...options.env,
  });
  const clock = options.clock ?? new ManualClock();
  const logs: string[] = options.logs ?? [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await buildApp({
    config,
    clock,
    logDestination,
    ...(options.rateLimitKeySlackMs ? { rateLimitKeySlackMs: options.rateLimitKeySlackMs } : {}),
    ...(options.claimPollIntervalMs ? { claimPollIntervalMs: options.claimPollIntervalMs } : {}),
    ...(options.webhookBackstopMs ? { webhookBackstopMs: options.webhookBackstopMs } : {}),
    ...(options.channel ? { channel: options.channel } : {}),
  });
  await options.beforeListen?.(app);
  await app.listen({ host: "127.0.0.1", port: options.port ?? 0 });
  const address = app.server.address();
  if (typeof address !== "object" || !address) throw new Error("server has no address");
  const origin = `http://127.0.0.1:${address.port}`;
  const baseUrl = `${origin}/v1`;

  const server: TestServer = {
    app,
    origin,
    baseUrl,
    config,
    clock,
    logs,
    instances: [],
    async createClient(org, role) {
      const clients = app.services.clients;
      try {
        await clients.createOrganization(org);
      } catch {
        // exists already
      }
      return clients.createClient(org, role);
    },
    async token(credentials) {
      const response = await fetch(`${baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_id: credentials.client_id,
          client_secret: credentials.client_secret,
          audience: config.audience,
        }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (response.status !== 200 || !body.access_token) {
        throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    async close() {
      await app.close();
      if (!shared) {
        await database?.drop();
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
  server.instances = [server];
  return server;
}

/** GET/POST helper: returns status, headers and the parsed JSON body (or text). */
export async function call(
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | URLSearchParams;
    json?: unknown;
  } = {},
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on response bodies field by field
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  const response = await fetch(url, { method: init.method ?? (body ? "POST" : "GET"), headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

const basicApk = fileURLToPath(new URL("./fixtures/binaries/app-basic.apk", import.meta.url));
const basicTestApk = fileURLToPath(new URL("./fixtures/binaries/app-basic-androidTest.apk", import.meta.url));

/**
 * Registers the Android app `com.example.basic` and uploads the basic APK fixture as `version`: the setup
 * every test of plans, runs and agents starts from.
 */
export async function registerBasicApp(
  server: TestServer,
  headers: Record<string, string>,
  version = "1.2.3",
): Promise<void> {
  await call(`${server.baseUrl}/apps`, {
    headers,
    json: { package_name: "com.example.basic", platform: "android" },
  });
  const upload = await fetch(`${server.baseUrl}/apps/com.example.basic/versions/${version}`, {
    method: "PUT",
    headers,
    body: await readFile(basicApk),
  });
  if (upload.status !== 201)
    throw new Error(`upload of the basic APK failed: ${upload.status} ${await upload.text()}`);
}

/**
 * Uploads the instrumentation APK built for the basic app (package com.example.basic.test, runner
 * androidx.test.runner.AndroidJUnitRunner) as the test package of `version`.
 */
export async function uploadBasicTestPackage(
  server: TestServer,
  headers: Record<string, string>,
  version = "1.2.3",
): Promise<void> {
  const upload = await fetch(`${server.baseUrl}/apps/com.example.basic/versions/${version}/test-package`, {
    method: "PUT",
    headers,
    body: await readFile(basicTestApk),
  });
  if (upload.status !== 201)
    throw new Error(`upload of the basic test APK failed: ${upload.status} ${await upload.text()}`);
}
