// What the admin CLI's suites (packages/server/src/cli/*.int.test.ts) share: workspaces (a data dir and a
// database), the CLI run in the test's own process (cli/run-server-cli.ts), the real bin as a child process for
// what only a process shows (start, signals, exit codes, cwd, umask), and a server in this process for the
// tests that need one running beside a command. Issue 26: the suite had started ~80 processes.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { runServerCli } from "../src/cli/run-server-cli.ts";
import { loadConfig } from "../src/config.ts";
import { migrateToLatest, openDatabase } from "../src/db/kysely.ts";
import { startServer } from "../src/main.ts";
import { call, createTestDatabase, type TestDatabase } from "./harness.ts";

export const bin = fileURLToPath(new URL("../bin/testbay-server.js", import.meta.url));
/**
 * How long a server may take to say it listens, and a CLI process to finish: a loaded CI machine running the
 * suites in parallel has been seen to need over 20 s for what takes 1 s on an idle one.
 */
export const patienceMs = 50_000;

/** A test that runs several processes: each may take up to patienceMs, but they seldom all do. */
export const severalRunsMs = 3 * patienceMs;

export type Env = Record<string, string>;
type Child = ChildProcessByStdio<null, Readable, Readable>;

export interface ClientCredentials {
  client_id: string;
  client_secret: string;
}

/** The suite's temporary directory, made before its first test and removed after its last. */
export let root: string;
/** Every child not yet ended, with the promise of its exit code. */
export const running = new Map<Child, Promise<number | null>>();
const databases: TestDatabase[] = [];
const servers: FastifyInstance[] = [];

/** Registers the hooks every CLI suite needs; call once at the top of the file. */
export function useCliSuite(): void {
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "testbay-cli-"));
  });
  afterEach(async () => {
    await Promise.all(
      [...running].map(([child, exit]) => {
        child.kill("SIGKILL");
        return exit;
      }),
    );
    await Promise.all(servers.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await Promise.all(databases.splice(0).map((database) => database.drop()));
    // Retried: a server's last files (the local agent's work dir) may still be going as a stopped one exits.
    await rm(root, { recursive: true, force: true, maxRetries: 5 });
  });
}

export interface Workspace {
  dataDir: string;
  database: TestDatabase;
  /** TESTBAY_DATA_DIR, TESTBAY_DATABASE_URL and TESTBAY_PORT=0: what every command of the test gets. */
  env: Env;
}

/**
 * A fresh data dir and a fresh, empty database (SQLite in the data dir, or a new PostgreSQL database): of the
 * project's kind, or PostgreSQL for the tests about it (these suites run in the sqlite project only:
 * vitest.config.ts).
 */
export async function createWorkspace(kind?: "postgres"): Promise<Workspace> {
  const dataDir = await mkdtemp(path.join(root, "data-"));
  const database = await createTestDatabase(dataDir, kind);
  databases.push(database);
  return {
    dataDir,
    database,
    env: { TESTBAY_DATA_DIR: dataDir, TESTBAY_DATABASE_URL: database.url, TESTBAY_PORT: "0" },
  };
}

/**
 * A workspace whose store exists, as `testbay-server start` or `migrate` leave it: the admin commands refuse
 * to work on a store that does not (admin-store.ts). Migrated directly: only the commands are tested.
 */
export async function createStore(kind?: "postgres"): Promise<Workspace> {
  const ws = await createWorkspace(kind);
  await migrateStore(ws.env);
  return ws;
}

export async function migrateStore(env: Env): Promise<void> {
  const handle = openDatabase(env.TESTBAY_DATABASE_URL as string);
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
}

/** Every client's name in the store, by client ID, read straight from the database. */
export async function clientNames(ws: Workspace): Promise<Record<string, string | null>> {
  const handle = openDatabase(ws.database.url);
  try {
    const rows = await handle.db.selectFrom("clients").select(["id", "name"]).execute();
    return Object.fromEntries(rows.map((row) => [row.id, row.name]));
  } finally {
    await handle.close();
  }
}

/** The local agent's client in each organization, from `<data dir>/local-agent.json` (features/agent/local-agent.ts). */
export async function localAgentClientIds(ws: Workspace): Promise<string[]> {
  const saved = JSON.parse(await readFile(path.join(ws.dataDir, "local-agent.json"), "utf8"));
  return Object.values(saved as Record<string, { client_id: string }>).map((c) => c.client_id);
}

/** The line every admin command but start and migrate prints first: which store it works on. */
export function usingLine(ws: Workspace): RegExp {
  if (ws.database.url.startsWith("sqlite:")) {
    const line = `using data dir ${ws.dataDir} (SQLite ${path.join(ws.dataDir, "testbay.db")})`;
    const escaped = line.replace(/[.*+?^$()[\]\\]/g, "\\$&");
    return new RegExp(`^${escaped}$`);
  }
  // The URL with whatever stands before its @ hidden (redact-connection-url.ts), and the database's name.
  const name = new URL(ws.database.url).pathname.slice(1);
  return new RegExp(`^using PostgreSQL postgres://(\\*\\*\\*@)?[^@ ]+/${name} \\(TESTBAY_DATABASE_URL\\)$`);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function stderrLines(result: CliResult): string[] {
  return result.stderr.trimEnd().split("\n");
}

/**
 * Runs `testbay-server ARGS…` in this process (cli/run-server-cli.ts), as the bin would in `cwd` (the suite's
 * root unless told) with only `env` set: what it prints, the server's log included, and its exit code.
 */
export async function runCli(args: string[], env: Env, cwd = root): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const toStdout = {
    write: (text: string) => {
      stdout += text;
    },
  };
  const code = await runServerCli(args, {
    env,
    cwd,
    stdout: toStdout,
    stderr: {
      write: (text: string) => {
        stderr += text;
      },
    },
    serverLog: toStdout,
  });
  return { code, stdout, stderr };
}

// ---------------------------------------------------------------------------------------------------------
// The real bin, as a child process

/** The runner's environment without its TESTBAY_* variables: the child sees only what the test sets. */
export function childEnv(env: Env): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith("TESTBAY_"));
  return { ...Object.fromEntries(inherited), ...env };
}

/**
 * Starts `testbay-server ARGS…` (through `shell`, when given: a /bin/sh script that ends with `exec "$@"`).
 * `exit` resolves with its exit code (null when a signal ended it) once the process has ended and all its
 * output has been read.
 */
export function spawnBinary(
  args: string[],
  env: Env,
  options: { cwd?: string; shell?: string } = {},
): { child: Child; exit: Promise<number | null> } {
  const command = [process.execPath, bin, ...args];
  const [file, ...argv] = options.shell ? ["/bin/sh", "-c", options.shell, "sh", ...command] : command;
  const child = spawn(file as string, argv, {
    cwd: options.cwd ?? root,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exit = new Promise<number | null>((resolve) =>
    child.once("close", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  running.set(child, exit);
  return { child, exit };
}

export function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${patienceMs} ms`)), patienceMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs the real `testbay-server ARGS…` to completion, in `cwd` (the suite's root unless told). */
export async function runBin(args: string[], env: Env, cwd?: string): Promise<CliResult> {
  const { child, exit } = spawnBinary(args, env, cwd === undefined ? {} : { cwd });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const code = await withTimeout(exit, `testbay-server ${args.join(" ")}`);
  return { code, stdout, stderr };
}

export interface ServerProcess {
  /** The `…/v1` base URL from the "Testbay is listening on" line. */
  url: string;
  /** Everything it wrote to stderr so far, line by line. */
  stderr: string[];
  child: Child;
  /** The first stderr line matching `pattern`, seen already or yet to come. */
  waitFor(pattern: RegExp): Promise<string>;
  /** Sends SIGTERM and resolves with the exit code once the process has ended. */
  stop(): Promise<number | null>;
}

/** Runs the real `testbay-server start` (through `shell`, see spawnBinary) and resolves once it says where it listens. */
export async function spawnServer(env: Env, options: { shell?: string } = {}): Promise<ServerProcess> {
  const { child, exit } = spawnBinary(["start"], env, options);
  const stderr: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve: (line: string) => void }>();
  // Its JSON log, read so that the server never blocks on a full pipe; the last lines are kept to show
  // what happened when it does not stop cleanly.
  const logTail: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    logTail.push(line);
    if (logTail.length > 200) logTail.shift();
  });
  createInterface({ input: child.stderr }).on("line", (line) => {
    stderr.push(line);
    for (const waiter of waiters) {
      if (waiter.pattern.test(line)) {
        waiters.delete(waiter);
        waiter.resolve(line);
      }
    }
  });
  const waitFor = (pattern: RegExp): Promise<string> => {
    const seen = stderr.find((line) => pattern.test(line));
    if (seen !== undefined) return Promise.resolve(seen);
    const line = new Promise<string>((resolve) => waiters.add({ pattern, resolve }));
    const ended = exit.then((code) => {
      throw new Error(
        `testbay-server start exited (code ${code}) before printing ${pattern}:\n${stderr.join("\n")}`,
      );
    });
    return withTimeout(Promise.race([line, ended]), `waiting for ${pattern} from testbay-server start`);
  };

  const listening = await waitFor(/^Testbay is listening on /);
  return {
    url: listening.replace("Testbay is listening on ", ""),
    stderr,
    child,
    waitFor,
    async stop() {
      child.kill("SIGTERM");
      const code = await withTimeout(exit, "testbay-server start after SIGTERM");
      if (code !== 0) {
        console.error(
          `testbay-server start exited with ${code} after SIGTERM; its stderr:\n${stderr.join("\n")}\n` +
            `the end of its log:\n${logTail.join("\n")}`,
        );
      }
      return code;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// A server in this process, for the tests about what a command changes for a running server

export interface InProcessServer {
  /** The `…/v1` base URL. */
  url: string;
  app: FastifyInstance;
  credentialsFile: string | undefined;
  /** What it logged, one JSON object a line. */
  log(): string;
  /** Closes it as SIGTERM would (main.ts closeOnSignals): what is still open when the test ends is closed then. */
  stop(): Promise<void>;
}

/**
 * Starts the server as `start` does (main.ts startServer) in this process, on the workspace's store; closed
 * after the test. The server is not what these tests are about, so it costs no process. Without the built-in
 * local agent unless `env` asks for it: on SQLite, its transactions (claims) and a command run in this thread
 * could wait for each other, the command blocking the thread the agent's transaction needs to end.
 */
export async function startInProcess(env: Env): Promise<InProcessServer> {
  let log = "";
  const running = await startServer(loadConfig({ TESTBAY_LOCAL_AGENT: "false", ...env }), {
    logDestination: {
      write: (line: string) => {
        log += line;
      },
    },
  });
  servers.push(running.app);
  return {
    url: running.baseUrl,
    app: running.app,
    credentialsFile: running.credentialsFile,
    log: () => log,
    stop: async () => {
      servers.splice(servers.indexOf(running.app), 1);
      await running.app.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// HTTP

export function requestToken(baseUrl: string, client: ClientCredentials, audience = "testbay") {
  return call(`${baseUrl}/oauth/token`, {
    json: {
      grant_type: "client_credentials",
      client_id: client.client_id,
      client_secret: client.client_secret,
      audience,
    },
  });
}

export async function accessToken(
  baseUrl: string,
  client: ClientCredentials,
  audience?: string,
): Promise<string> {
  const { status, body } = await requestToken(baseUrl, client, audience);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.access_token;
}

export function me(baseUrl: string, token: string) {
  return call(`${baseUrl}/me`, { headers: { "x-api-key": token } });
}

/** POST /auth/login as the dashboard does; returns status, headers and body. */
export function signIn(origin: string, email: string, password: string) {
  return call(`${origin}/auth/login`, { json: { email, password } });
}

/**
 * `migrate` (directly), `org create ORG` then `client create --org ORG --role ROLE`, as an operator would;
 * returns the JSON.
 */
export async function createClientWithCli(env: Env, org: string, role: string): Promise<ClientCredentials> {
  await migrateStore(env);
  const orgResult = await runCli(["org", "create", org], env);
  expect(orgResult.code, orgResult.stderr).toBe(0);
  const clientResult = await runCli(["client", "create", "--org", org, "--role", role], env);
  expect(clientResult.code, clientResult.stderr).toBe(0);
  return JSON.parse(clientResult.stdout);
}
