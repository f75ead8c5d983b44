// Black-box tests of the `testbay-server` binary: spawned as a new user would run it, configured only by
// TESTBAY_* variables, observed only through its exit code, its output, its files, the database and HTTP.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { compactVerify } from "jose";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, createTestDatabase, type TestDatabase, testDatabase } from "../test/harness.ts";
import { systemClock } from "./clock.ts";
import { migrateToLatest, openDatabase } from "./db/kysely.ts";
import { migrations } from "./db/migrations/index.ts";
import { ClientsRepo, ClientsService } from "./features/clients/index.ts";

const bin = fileURLToPath(new URL("../bin/testbay-server.js", import.meta.url));
/**
 * How long a server may take to say it listens, and a CLI command to finish: tsx start-up is about 1 s, but
 * a loaded CI machine running the suites in parallel has been seen to need over 20 s.
 */
const patienceMs = 50_000;

/** A test that runs the CLI several times: a CLI run may take up to patienceMs, but they seldom all do. */
const severalRunsMs = 3 * patienceMs;

type Env = Record<string, string>;
type Child = ChildProcessByStdio<null, Readable, Readable>;

interface ClientCredentials {
  client_id: string;
  client_secret: string;
}

let root: string;
/** Every child not yet ended, with the promise of its exit code. */
const running = new Map<Child, Promise<number | null>>();
const databases: TestDatabase[] = [];

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
});

afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
  await rm(root, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------
// Helpers

interface Workspace {
  dataDir: string;
  database: TestDatabase;
  /** TESTBAY_DATA_DIR, TESTBAY_DATABASE_URL and TESTBAY_PORT=0: what every command of the test gets. */
  env: Env;
}

/**
 * A fresh data dir and a fresh, empty database (SQLite in the data dir, or a new PostgreSQL database): of the
 * project's kind, or PostgreSQL for the tests about it (this file runs in the sqlite project only: vitest.config.ts).
 */
async function createWorkspace(kind?: "postgres"): Promise<Workspace> {
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
 * to work on a store that does not (admin-store.ts). Migrated in this process: only the commands are tested.
 */
async function createStore(): Promise<Workspace> {
  const ws = await createWorkspace();
  await migrateStore(ws.env);
  return ws;
}

async function migrateStore(env: Env): Promise<void> {
  const handle = openDatabase(env.TESTBAY_DATABASE_URL as string);
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
}

/** Every client's name in the store, by client ID, read straight from the database. */
async function clientNames(ws: Workspace): Promise<Record<string, string | null>> {
  const handle = openDatabase(ws.database.url);
  try {
    const rows = await handle.db.selectFrom("clients").select(["id", "name"]).execute();
    return Object.fromEntries(rows.map((row) => [row.id, row.name]));
  } finally {
    await handle.close();
  }
}

/** The local agent's client in each organization, from `<data dir>/local-agent.json` (features/agent/local-agent.ts). */
async function localAgentClientIds(ws: Workspace): Promise<string[]> {
  const saved = JSON.parse(await readFile(path.join(ws.dataDir, "local-agent.json"), "utf8"));
  return Object.values(saved as Record<string, { client_id: string }>).map((c) => c.client_id);
}

/** The line every admin command but start and migrate prints first: which store it works on. */
function usingLine(ws: Workspace): RegExp {
  if (ws.database.url.startsWith("sqlite:")) {
    const line = `using data dir ${ws.dataDir} (SQLite ${path.join(ws.dataDir, "testbay.db")})`;
    const escaped = line.replace(/[.*+?^$()[\]\\]/g, "\\$&");
    return new RegExp(`^${escaped}$`);
  }
  // The URL with whatever stands before its @ hidden (redact-connection-url.ts), and the database's name.
  const name = new URL(ws.database.url).pathname.slice(1);
  return new RegExp(`^using PostgreSQL postgres://(\\*\\*\\*@)?[^@ ]+/${name} \\(TESTBAY_DATABASE_URL\\)$`);
}

/** The runner's environment without its TESTBAY_* variables: the child sees only what the test sets. */
function childEnv(env: Env): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith("TESTBAY_"));
  return { ...Object.fromEntries(inherited), ...env };
}

/**
 * Starts `testbay-server ARGS…`. `exit` resolves with its exit code (null when a signal ended it) once the
 * process has ended and all its output has been read.
 */
function spawnBinary(args: string[], env: Env, cwd = root): { child: Child; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
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

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${patienceMs} ms`)), patienceMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `testbay-server ARGS…` to completion, in `cwd` (the tests' temporary root unless told). */
async function runCli(args: string[], env: Env, cwd?: string): Promise<CliResult> {
  const { child, exit } = spawnBinary(args, env, cwd);
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

interface ServerProcess {
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

/** Runs `testbay-server start` and resolves once it says where it listens. */
async function spawnServer(env: Env): Promise<ServerProcess> {
  const { child, exit } = spawnBinary(["start"], env);
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

function requestToken(baseUrl: string, client: ClientCredentials, audience = "testbay") {
  return call(`${baseUrl}/oauth/token`, {
    json: {
      grant_type: "client_credentials",
      client_id: client.client_id,
      client_secret: client.client_secret,
      audience,
    },
  });
}

async function accessToken(baseUrl: string, client: ClientCredentials, audience?: string): Promise<string> {
  const { status, body } = await requestToken(baseUrl, client, audience);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.access_token;
}

function me(baseUrl: string, token: string) {
  return call(`${baseUrl}/me`, { headers: { "x-api-key": token } });
}

/**
 * `migrate`, `org create ORG` then `client create --org ORG --role ROLE`, as an operator would (the migration
 * in this process); returns the JSON.
 */
async function createClientWithCli(env: Env, org: string, role: string): Promise<ClientCredentials> {
  await migrateStore(env);
  const orgResult = await runCli(["org", "create", org], env);
  expect(orgResult.code, orgResult.stderr).toBe(0);
  const clientResult = await runCli(["client", "create", "--org", org, "--role", role], env);
  expect(clientResult.code, clientResult.stderr).toBe(0);
  return JSON.parse(clientResult.stdout);
}

/** POST /auth/login as the dashboard does; returns status, headers and body. */
function signIn(origin: string, email: string, password: string) {
  return call(`${origin}/auth/login`, { json: { email, password } });
}

function stderrLines(result: CliResult): string[] {
  return result.stderr.trimEnd().split("\n");
}

// ---------------------------------------------------------------------------------------------------------

describe("testbay-server start", () => {
  if (testDatabase === "sqlite") {
    it("on an empty embedded store, creates organization default with a ci and an agent client", async () => {
      const ws = await createWorkspace();
      const server = await spawnServer(ws.env);
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const file = path.join(ws.dataDir, "credentials.json");
      expect(await server.waitFor(/^Their credentials are in /)).toContain(file);
      expect(server.stderr).toContain(`Created organization "default" with a ci and an agent client.`);
      expect(server.stderr.filter((line) => line.startsWith("warning:"))).toEqual([]);

      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const credentials = JSON.parse(await readFile(file, "utf8"));
      const client = { client_id: expect.stringMatching(/^cl_/), client_secret: expect.any(String) };
      expect(credentials).toEqual({
        audience: "testbay",
        base_url: server.url,
        ci: client,
        agent: client,
        admin: { email: "admin@localhost", password: expect.any(String) },
      });
      expect(credentials.ci.client_id).not.toBe(credentials.agent.client_id);
      expect(server.stderr).toContain("Created admin@localhost, who can sign in to the dashboard.");

      // The banner says where the dashboard is (the API's URL shows an index in a browser, not a 404).
      const origin = new URL(server.url).origin;
      expect(server.stderr).toContain(`  Dashboard: ${origin}/  (open it in a browser)`);
      expect(server.stderr).toContain(`  API:       ${server.url}  (reference: ${origin}/docs)`);
      const index = await call(server.url);
      expect(index.status).toBe(200);
      expect(index.body.links).toEqual({
        openapi: `${server.url}/openapi.json`,
        docs: `${origin}/docs`,
        dashboard: `${origin}/`,
      });

      // The clients it made say where they came from: the file's two, and the built-in local agent's.
      const [localAgent] = await localAgentClientIds(ws);
      expect(await clientNames(ws)).toEqual({
        [credentials.ci.client_id]: "ci (created at first start)",
        [credentials.agent.client_id]: "agent (created at first start)",
        [localAgent as string]: "Built-in local agent",
      });

      // The first person signs in with the file's password and is an admin of organization default.
      const login = await signIn(origin, credentials.admin.email, credentials.admin.password);
      expect(login.status, JSON.stringify(login.body)).toBe(200);
      expect(login.body.user).toEqual({ email: "admin@localhost", role: "admin", org: "default" });
      expect(await signIn(origin, "admin@localhost", `${credentials.admin.password}x`)).toMatchObject({
        status: 401,
        body: { code: "invalid_credentials" },
      });

      // Used exactly as a new user would: the file's base_url and audience, nothing else.
      for (const role of ["ci", "agent"] as const) {
        const token = await accessToken(credentials.base_url, credentials[role], credentials.audience);
        const { status, body } = await me(credentials.base_url, token);
        expect(status).toBe(200);
        expect(body).toMatchObject({
          client_id: credentials[role].client_id,
          role,
          organization: { id: expect.stringMatching(/^org_/), name: "default" },
        });
      }

      expect(await server.stop()).toBe(0);
    });

    it("on a second start of the same store, keeps the credentials and creates none", async () => {
      const ws = await createWorkspace();
      const file = path.join(ws.dataDir, "credentials.json");
      const first = await spawnServer(ws.env);
      await first.waitFor(/^Their credentials are in /);
      expect(await first.stop()).toBe(0);
      // As if the first start had answered on another port (TESTBAY_PORT changed since).
      const stale = { ...JSON.parse(await readFile(file, "utf8")), base_url: "http://127.0.0.1:1/v1" };
      await writeFile(file, `${JSON.stringify(stale, null, 2)}\n`, { mode: 0o600 });
      const written = await readFile(file, "utf8");

      // As a store whose first start came before clients had names (migration 0024) would be.
      const named = await clientNames(ws);
      const handle = openDatabase(ws.database.url);
      await handle.db.updateTable("clients").set({ name: null }).execute();
      await handle.close();

      const second = await spawnServer(ws.env);
      const credentials = JSON.parse(written);
      const token = await accessToken(second.url, credentials.ci);
      expect((await me(second.url, token)).body.organization.name).toBe("default");
      expect(await second.stop()).toBe(0);
      // Named again at start, from credentials.json and local-agent.json: the same clients, no new ones.
      expect(await clientNames(ws)).toEqual(named);
      expect(Object.values(named)).toEqual(
        expect.arrayContaining(["ci (created at first start)", "Built-in local agent"]),
      );

      // Stopped, so every line it wrote has been read.
      expect(second.stderr.join("\n")).not.toMatch(/Created organization|credentials are in/);
      // The same secrets; base_url follows the address this start answers on, so what reads its address from
      // the file (the README's walkthroughs) calls this server, not an earlier one.
      const rewritten = JSON.parse(await readFile(file, "utf8"));
      expect(rewritten).toEqual({ ...credentials, base_url: second.url });
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    });
  }
  it("on PostgreSQL, creates no credentials file: clients come from the admin CLI", async () => {
    const ws = await createWorkspace("postgres");
    const ci = await createClientWithCli(ws.env, "acme", "ci");
    const server = await spawnServer(ws.env);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

    const { status, body } = await me(server.url, await accessToken(server.url, ci));
    expect(status).toBe(200);
    expect(body).toMatchObject({ client_id: ci.client_id, role: "ci", organization: { name: "acme" } });

    expect(await server.stop()).toBe(0);
    expect(server.stderr.join("\n")).not.toMatch(/Created organization|credentials are in/);
    expect(existsSync(path.join(ws.dataDir, "credentials.json"))).toBe(false);
    // The client made without --name has none; the built-in local agent's says what it is.
    const [localAgent] = await localAgentClientIds(ws);
    expect(await clientNames(ws)).toEqual({
      [ci.client_id]: null,
      [localAgent as string]: "Built-in local agent",
    });
  });

  it("warns about a TESTBAY_ variable it does not know (a typo), and starts anyway", async () => {
    const ws = await createWorkspace();
    const server = await spawnServer({ ...ws.env, TESTBAY_PROT: "9" });
    // Warnings come before the listening line, so they have all been read by now.
    expect(server.stderr.filter((line) => line.startsWith("warning:"))).toEqual([
      "warning: TESTBAY_PROT is not a Testbay setting (a typo?)",
    ]);
    expect((await call(`${new URL(server.url).origin}/healthz`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });
});

describe("admin commands without a store", () => {
  it(
    "in a directory without .testbay: exit 2 naming TESTBAY_DATA_DIR and what to do; no file is created",
    async () => {
      const elsewhere = await mkdtemp(path.join(root, "elsewhere-"));
      const commands = [
        ["client", "list"],
        ["org", "create", "acme"],
        ["client", "create", "--org", "default", "--role", "ci", "--name", "CI"],
        ["user", "list"],
      ];
      // No TESTBAY_* variable: the data dir is ./.testbay of the directory it runs in.
      const results = await Promise.all(commands.map((args) => runCli(args, {}, elsewhere)));
      const dataDir = path.join(elsewhere, ".testbay");
      for (const [i, result] of results.entries()) {
        const what = commands[i]?.join(" ");
        expect(result.code, what).toBe(2);
        expect(result.stdout, what).toBe("");
        expect(stderrLines(result), what).toEqual([
          `testbay-server: No Testbay store here: ${path.join(dataDir, "testbay.db")} does not exist (TESTBAY_DATA_DIR is ${dataDir} (./.testbay in the current directory unless set)). Run this from the directory that holds the server's .testbay, or set TESTBAY_DATA_DIR to the server's data dir (TESTBAY_DATABASE_URL to its database, if it has one elsewhere); to make a new store, run testbay-server start (or testbay-server migrate) first.`,
        ]);
      }
      expect(await readdir(elsewhere)).toEqual([]);
    },
    severalRunsMs,
  );

  it("on a database no migration was applied to: exit 2, and it stays as it was", async () => {
    const ws = await createWorkspace();
    // Someone else's database, or one made by hand: it holds a table, but not Testbay's.
    const handle = openDatabase(ws.database.url);
    await sql`create table unrelated (x integer)`.execute(handle.db);
    await handle.close();

    const result = await runCli(["org", "list"], ws.env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("has no Testbay tables (no migration applied)");
    expect(result.stderr).toContain(testDatabase === "sqlite" ? "TESTBAY_DATA_DIR" : "TESTBAY_DATABASE_URL");
    expect(result.stderr).toContain("testbay-server migrate");

    const after = openDatabase(ws.database.url);
    try {
      const tables = await after.db.introspection.getTables({ withInternalKyselyTables: true });
      expect(tables.map((table) => table.name)).toEqual(["unrelated"]);
    } finally {
      await after.close();
    }
  });

  it("on a PostgreSQL database that does not exist: exit 2 naming TESTBAY_DATABASE_URL", async () => {
    const ws = await createWorkspace("postgres");
    const url = new URL(ws.database.url);
    url.pathname = `${url.pathname}_missing`;
    const result = await runCli(["client", "list"], { ...ws.env, TESTBAY_DATABASE_URL: url.toString() });
    expect(result.code).toBe(2);
    expect(stderrLines(result)).toEqual([
      expect.stringMatching(
        /^testbay-server: No Testbay store here: PostgreSQL has no database postgres:\/\/.*_missing \(create it with createdb\)\. Set TESTBAY_DATABASE_URL to the server's database/,
      ),
    ]);
  });
});

describe("testbay-server --version", () => {
  it("prints the server's version (packages/server/package.json) and exits 0", async () => {
    const { version } = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const result = await runCli([flag], {});
      expect(result.code, flag).toBe(0);
      expect(result.stdout, flag).toBe(`${version}\n`);
      expect(result.stderr, flag).toBe("");
    }
  });
});

describe("testbay-server org create", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createStore();
  });

  it("prints the new organization as JSON", async () => {
    const result = await runCli(["org", "create", "acme"], ws.env);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: expect.stringMatching(/^org_/), name: "acme" });
  });

  it("refuses a name that exists already, with exit code 1", async () => {
    expect((await runCli(["org", "create", "twice"], ws.env)).code).toBe(0);
    const again = await runCli(["org", "create", "twice"], ws.env);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(stderrLines(again)).toEqual([
      expect.stringMatching(usingLine(ws)),
      'testbay-server: Organization "twice" exists already.',
    ]);
  });

  it("refuses a name that breaks the naming rule, and states the rule", async () => {
    const result = await runCli(["org", "create", "Bad Name!"], ws.env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('"Bad Name!" is not valid');
    expect(result.stderr).toMatch(/lowercase letters, digits, '\.', '_' or '-'/);
  });
});

describe("testbay-server client create", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createStore();
  });

  it("prints the credentials as JSON and keeps only a scrypt hash of the secret", async () => {
    expect((await runCli(["org", "create", "widgets"], ws.env)).code).toBe(0);
    const result = await runCli(["client", "create", "--org", "widgets", "--role", "admin"], ws.env);
    expect(result.code, result.stderr).toBe(0);
    const issued = JSON.parse(result.stdout);
    expect(issued).toEqual({
      client_id: expect.stringMatching(/^cl_/),
      client_secret: expect.any(String),
      org: "widgets",
      role: "admin",
      name: null,
    });
    expect(issued.client_secret.length).toBeGreaterThanOrEqual(32);

    const handle = openDatabase(ws.database.url);
    try {
      const row = await handle.db
        .selectFrom("clients")
        .select("secret_hash")
        .where("id", "=", issued.client_id)
        .executeTakeFirstOrThrow();
      expect(row.secret_hash).toMatch(/^scrypt\$/);
      expect(row.secret_hash).not.toContain(issued.client_secret);
      // Every row of every table, as text.
      const dump: unknown[] = [];
      for (const table of await handle.db.introspection.getTables()) {
        dump.push((await sql`select * from ${sql.table(table.name)}`.execute(handle.db)).rows);
      }
      const text = JSON.stringify(dump);
      expect(text).toContain(issued.client_id);
      expect(text).not.toContain(issued.client_secret);
    } finally {
      await handle.close();
    }

    if (testDatabase === "sqlite") {
      // The bytes on disk, write-ahead log included: the client is there, its secret is not.
      const files = (await readdir(ws.dataDir)).filter((name) => name.startsWith("testbay.db"));
      const bytes = Buffer.concat(
        await Promise.all(files.map((name) => readFile(path.join(ws.dataDir, name)))),
      );
      expect(bytes.includes(issued.client_id)).toBe(true);
      expect(bytes.includes(issued.client_secret)).toBe(false);
    }
  });

  it("gives the client the --name it is told, trimmed, and refuses one that breaks the rule", async () => {
    const named = await runCli(
      ["client", "create", "--org", "widgets", "--role", "ci", "--name", " nightly CI "],
      ws.env,
    );
    expect(named.code, named.stderr).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({ org: "widgets", role: "ci", name: "nightly CI" });

    const bad = await runCli(
      ["client", "create", "--org", "widgets", "--role", "ci", "--name", "x".repeat(101)],
      ws.env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(stderrLines(bad)).toEqual([
      expect.stringMatching(usingLine(ws)),
      'testbay-server: The client name is 101 characters long; at most 100 are allowed: give --name 1–100 printable characters (no line breaks, tabs or other control characters), e.g. --name "nightly CI".',
    ]);
  });

  it("refuses an unknown organization and says how to create it", async () => {
    const result = await runCli(["client", "create", "--org", "nowhere", "--role", "ci"], ws.env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('Organization "nowhere" does not exist');
    expect(result.stderr).toContain("testbay-server org create nowhere");
  });

  it("refuses an unknown role and lists the allowed ones", async () => {
    const result = await runCli(["client", "create", "--org", "widgets", "--role", "root"], ws.env);
    expect(result.code).toBeGreaterThan(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("root");
    expect(result.stderr).toContain("ci, agent, admin");
  });
});

describe("testbay-server user create", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createStore();
    expect((await runCli(["org", "create", "default"], ws.env)).code).toBe(0);
    expect((await runCli(["org", "create", "widgets"], ws.env)).code).toBe(0);
  });

  it(
    "prints {email, role, org, password}; the person signs in with it, and only a scrypt hash is stored",
    async () => {
      const result = await runCli(
        ["user", "create", "--email", "Ann@Example.com", "--role", "member", "--org", "widgets"],
        ws.env,
      );
      expect(result.code, result.stderr).toBe(0);
      const issued = JSON.parse(result.stdout);
      expect(issued).toEqual({
        email: "Ann@Example.com",
        role: "member",
        org: "widgets",
        password: expect.any(String),
      });
      expect(issued.password.length).toBeGreaterThanOrEqual(20);

      const handle = openDatabase(ws.database.url);
      try {
        const row = await handle.db
          .selectFrom("users")
          .select("password_hash")
          .where("email_folded", "=", "ann@example.com")
          .executeTakeFirstOrThrow();
        expect(row.password_hash).toMatch(/^scrypt\$/);
        expect(row.password_hash).not.toContain(issued.password);
      } finally {
        await handle.close();
      }

      // The same email in other capitals is the same person of the organization: refused.
      const again = await runCli(
        ["user", "create", "--email", "ann@example.COM", "--role", "viewer", "--org", "widgets"],
        ws.env,
      );
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("exists already");

      const server = await spawnServer(ws.env);
      const origin = new URL(server.url).origin;
      // Emails are case-insensitive at sign-in too.
      const login = await signIn(origin, "ann@example.com", issued.password);
      expect(login.status, JSON.stringify(login.body)).toBe(200);
      expect(login.body.user).toEqual({ email: "Ann@Example.com", role: "member", org: "widgets" });
      expect(login.headers.get("set-cookie")).toMatch(
        /^testbay_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/,
      );
      expect(await server.stop()).toBe(0);

      const list = await runCli(["user", "list", "--json"], ws.env);
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout)).toEqual([
        {
          email: "Ann@Example.com",
          org: "widgets",
          role: "member",
          created_at: expect.any(String),
          disabled_at: null,
        },
      ]);
      expect(list.stdout).not.toContain(issued.password);
    },
    severalRunsMs,
  );

  it(
    "puts people in organization default unless told, and refuses unknown roles and organizations",
    async () => {
      const created = await runCli(
        ["user", "create", "--email", "bob@example.com", "--role", "viewer"],
        ws.env,
      );
      expect(created.code, created.stderr).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ org: "default", role: "viewer" });

      const role = await runCli(["user", "create", "--email", "c@example.com", "--role", "ci"], ws.env);
      expect(role.code).toBeGreaterThan(0);
      expect(role.stderr).toContain("viewer, member, admin");

      const org = await runCli(
        ["user", "create", "--email", "c@example.com", "--role", "viewer", "--org", "nowhere"],
        ws.env,
      );
      expect(org.code).toBe(1);
      expect(org.stderr).toContain("testbay-server org create nowhere");
    },
    severalRunsMs,
  );

  it(
    "gives an email an account in each organization; disable and enable then need --org, and only then",
    async () => {
      const elsewhere = await runCli(
        ["user", "create", "--email", "ANN@example.com", "--role", "admin", "--org", "default"],
        ws.env,
      );
      expect(elsewhere.code, elsewhere.stderr).toBe(0);
      expect(JSON.parse(elsewhere.stdout)).toMatchObject({ email: "ANN@example.com", org: "default" });

      const which = await runCli(["user", "disable", "ann@example.com"], ws.env);
      expect(which.code).toBe(2);
      expect(which.stderr).toContain(
        "ann@example.com has an account in each of the organizations default, widgets; say which with --org NAME",
      );
      const disabled = await runCli(["user", "disable", "ann@example.com", "--org", "default"], ws.env);
      expect(disabled.code, disabled.stderr).toBe(0);
      const list = await runCli(["user", "list", "--json"], ws.env);
      const anns = JSON.parse(list.stdout).filter(
        (row: { email: string }) => row.email.toLowerCase() === "ann@example.com",
      );
      expect(
        anns.map((row: { org: string; disabled_at: string | null }) => [row.org, row.disabled_at !== null]),
      ).toEqual([
        ["default", true],
        ["widgets", false],
      ]);
      const enabled = await runCli(["user", "enable", "ANN@example.com", "--org", "default"], ws.env);
      expect(enabled.code, enabled.stderr).toBe(0);
      // One account: no --org needed; a wrong one is named.
      expect((await runCli(["user", "disable", "bob@example.com"], ws.env)).code).toBe(0);
      const wrongOrg = await runCli(["user", "enable", "bob@example.com", "--org", "widgets"], ws.env);
      expect(wrongOrg.code).toBe(1);
      expect(wrongOrg.stderr).toContain("No person has email bob@example.com in organization widgets");
    },
    severalRunsMs,
  );
});

describe("testbay-server client disable", () => {
  it("stops the client's existing tokens at once and refuses it new ones", async () => {
    const ws = await createWorkspace();
    const ci = await createClientWithCli(ws.env, "ops", "ci");
    const server = await spawnServer(ws.env);
    const token = await accessToken(server.url, ci);
    expect((await me(server.url, token)).status).toBe(200);

    const result = await runCli(["client", "disable", ci.client_id], ws.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Client ${ci.client_id} is disabled.`);

    const fresh = await requestToken(server.url, ci);
    expect(fresh.status).toBe(401);
    expect(fresh.body).toMatchObject({ code: "invalid_access_token", reason: "client_disabled" });
    const reused = await me(server.url, token);
    expect(reused.status).toBe(401);
    expect(reused.body).toMatchObject({ code: "invalid_access_token", reason: "client_disabled" });
  });

  it("refuses an unknown client ID with exit code 1", async () => {
    const ws = await createStore();
    const result = await runCli(["client", "disable", "cl_nobody"], ws.env);
    expect(result.code).toBe(1);
    expect(stderrLines(result)).toEqual([
      expect.stringMatching(usingLine(ws)),
      'testbay-server: Client "cl_nobody" does not exist.',
    ]);
  });
});

describe("testbay-server client enable", () => {
  it(
    "lets a disabled client get tokens again, but not use the ones it had before",
    async () => {
      const ws = await createWorkspace();
      const ci = await createClientWithCli(ws.env, "ops", "ci");
      const server = await spawnServer(ws.env);
      const before = await accessToken(server.url, ci);
      expect((await runCli(["client", "disable", ci.client_id], ws.env)).code).toBe(0);

      const result = await runCli(["client", "enable", ci.client_id], ws.env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`Client ${ci.client_id} is enabled.`);

      const stale = await me(server.url, before);
      expect(stale.status).toBe(401);
      expect(stale.body).toMatchObject({ code: "invalid_access_token", reason: "token_revoked" });
      expect((await me(server.url, await accessToken(server.url, ci))).status).toBe(200);
      // Enabling an enabled client is harmless.
      expect((await runCli(["client", "enable", ci.client_id], ws.env)).code).toBe(0);
    },
    severalRunsMs,
  );

  it("refuses an unknown client ID with exit code 1", async () => {
    const ws = await createStore();
    const result = await runCli(["client", "enable", "cl_nobody"], ws.env);
    expect(result.code).toBe(1);
    expect(stderrLines(result)).toEqual([
      expect.stringMatching(usingLine(ws)),
      'testbay-server: Client "cl_nobody" does not exist.',
    ]);
  });
});

describe("testbay-server client rotate", () => {
  it(
    "prints a new secret once; the old secret and the tokens issued before stop working at once",
    async () => {
      const ws = await createWorkspace();
      const ci = await createClientWithCli(ws.env, "ops", "ci");
      const server = await spawnServer(ws.env);
      const before = await accessToken(server.url, ci);
      expect((await me(server.url, before)).status).toBe(200);

      const result = await runCli(["client", "rotate", ci.client_id], ws.env);
      expect(result.code, result.stderr).toBe(0);
      const rotated = JSON.parse(result.stdout);
      expect(rotated).toEqual({
        client_id: ci.client_id,
        client_secret: expect.stringMatching(/^tbs_/),
        org: "ops",
        role: "ci",
        name: null,
      });
      expect(rotated.client_secret).not.toBe(ci.client_secret);

      const stale = await me(server.url, before);
      expect(stale.status).toBe(401);
      expect(stale.body).toMatchObject({ code: "invalid_access_token", reason: "token_revoked" });
      expect((await requestToken(server.url, ci)).body).toMatchObject({ reason: "invalid_client" });
      const fresh = await accessToken(server.url, rotated);
      expect((await me(server.url, fresh)).body).toMatchObject({ client_id: ci.client_id, role: "ci" });

      const stored = await runCli(["client", "list", "--json"], ws.env);
      expect(stored.stdout).not.toContain(rotated.client_secret);
    },
    severalRunsMs,
  );

  it("refuses an unknown client ID with exit code 1", async () => {
    const ws = await createStore();
    const result = await runCli(["client", "rotate", "cl_nobody"], ws.env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(stderrLines(result)).toEqual([
      expect.stringMatching(usingLine(ws)),
      'testbay-server: Client "cl_nobody" does not exist.',
    ]);
  });
});

describe("testbay-server org list and client list", () => {
  it(
    "list organizations and clients as a table or as JSON, never with a secret or its hash",
    async () => {
      const ws = await createWorkspace();
      // Set up in this process: each CLI run costs a Node start-up, and only the listing is under test.
      const handle = openDatabase(ws.database.url);
      let acmeCi: ClientCredentials;
      let globexAgent: ClientCredentials;
      try {
        await migrateToLatest(handle.db);
        const clients = new ClientsService(new ClientsRepo(handle.db), systemClock);
        await clients.createOrganization("globex");
        await clients.createOrganization("acme");
        acmeCi = await clients.createClient("acme", "ci", undefined, "nightly CI");
        globexAgent = await clients.createClient("globex", "agent");
        await clients.disableClient(globexAgent.client_id);
      } finally {
        await handle.close();
      }

      const orgs = await runCli(["org", "list", "--json"], ws.env);
      expect(orgs.code, orgs.stderr).toBe(0);
      const orgRows = JSON.parse(orgs.stdout);
      expect(orgRows.map((org: { name: string }) => org.name)).toEqual(["acme", "globex"]);
      expect(orgRows[0]).toEqual({
        id: expect.stringMatching(/^org_/),
        name: "acme",
        created_at: expect.stringMatching(/Z$/),
      });
      const orgTable = (await runCli(["org", "list"], ws.env)).stdout.trimEnd().split("\n");
      expect(orgTable[0]).toMatch(/^ID +NAME +CREATED$/);
      expect(orgTable.slice(1).map((line) => line.split(/ +/)[1])).toEqual(["acme", "globex"]);

      const all = JSON.parse((await runCli(["client", "list", "--json"], ws.env)).stdout);
      expect(all).toEqual([
        {
          client_id: acmeCi.client_id,
          name: "nightly CI",
          org: "acme",
          role: "ci",
          created_at: expect.stringMatching(/Z$/),
          disabled_at: null,
        },
        {
          client_id: globexAgent.client_id,
          name: null,
          org: "globex",
          role: "agent",
          created_at: expect.stringMatching(/Z$/),
          disabled_at: expect.stringMatching(/Z$/),
        },
      ]);
      const onlyAcme = JSON.parse(
        (await runCli(["client", "list", "--org", "acme", "--json"], ws.env)).stdout,
      );
      expect(onlyAcme.map((c: { client_id: string }) => c.client_id)).toEqual([acmeCi.client_id]);

      const table = await runCli(["client", "list"], ws.env);
      const lines = table.stdout.trimEnd().split("\n");
      // The name last: it may hold blanks, and the columns before it stay one word each.
      expect(lines[0]).toMatch(/^CLIENT ID +ORG +ROLE +CREATED +DISABLED +NAME$/);
      expect(lines[1]).toMatch(new RegExp(`^${acmeCi.client_id} +acme +ci +\\S+Z +- +nightly CI$`));
      expect(lines[2]).toMatch(new RegExp(`^${globexAgent.client_id} +globex +agent +\\S+Z +\\S+Z +-$`));
      expect(stderrLines(table)).toEqual([expect.stringMatching(usingLine(ws))]);
      for (const output of [table.stdout, JSON.stringify(all)]) {
        expect(output).not.toContain(acmeCi.client_secret);
        expect(output).not.toMatch(/scrypt|tbs_/);
      }
    },
    severalRunsMs,
  );

  it("refuses an unknown organization and says how to list them", async () => {
    const ws = await createStore();
    const result = await runCli(["client", "list", "--org", "nope"], ws.env);
    expect(result.code).toBe(1);
    expect(stderrLines(result)).toEqual([
      expect.stringMatching(usingLine(ws)),
      'testbay-server: Organization "nope" does not exist; list them with: testbay-server org list',
    ]);
  });
});

describe("testbay-server start on a port in use", () => {
  it(
    "says which port, how to choose another, and exits non-zero",
    async () => {
      const ws = await createWorkspace();
      const first = await spawnServer(ws.env);
      const port = Number(new URL(first.url).port);
      const second = await runCli(["start"], { ...ws.env, TESTBAY_PORT: String(port) });
      expect(second.code).toBe(1);
      expect(stderrLines(second)).toEqual([
        `testbay-server: port ${port} is in use: set TESTBAY_PORT=${port + 1} (or another free port) or stop the other process`,
      ]);
      expect(await first.stop()).toBe(0);
    },
    severalRunsMs,
  );
});

describe("testbay-server migrate", () => {
  it("applies the pending migrations to a fresh database, then says it is up to date", async () => {
    const ws = await createWorkspace();
    const first = await runCli(["migrate"], ws.env);
    expect(first.code, first.stderr).toBe(0);
    expect(stderrLines(first)).toEqual([`Applied: ${Object.keys(migrations).join(", ")}`]);

    const second = await runCli(["migrate"], ws.env);
    expect(second.code, second.stderr).toBe(0);
    expect(stderrLines(second)).toEqual(["The database is up to date."]);
  });

  it("lets several processes migrate one fresh database at once: one applies, the others wait and find it done", async () => {
    const ws = await createWorkspace();
    const results = await Promise.all([1, 2, 3].map(() => runCli(["migrate"], ws.env)));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const said = results.map((result) => stderrLines(result)[0]).sort();
    expect(said).toEqual([
      `Applied: ${Object.keys(migrations).join(", ")}`,
      "The database is up to date.",
      "The database is up to date.",
    ]);
  });
});

describe("bad configuration", () => {
  /** A data dir that a misconfigured command must never get as far as creating. */
  const untouched = () => path.join(root, "never-created");
  const run = (env: Env) => runCli(["start"], { TESTBAY_DATA_DIR: untouched(), TESTBAY_PORT: "0", ...env });

  it.each([
    ["TESTBAY_PORT", "abc", /port number 0–65535/, { echoed: true }],
    ["TESTBAY_DATABASE_URL", "mysql://x", /sqlite:<file> or postgres:\/\//, { echoed: true }],
    ["TESTBAY_SIGNING_KEY", "garbage", /Ed25519 private key in PEM form/, { echoed: false }],
    ["TESTBAY_RATE_LIMIT_BURST", "0", /whole number ≥ 1/, { echoed: true }],
  ])(
    "%s=%s stops start at once with exit code 2 and one line naming it",
    async (name, value, accepts, { echoed }) => {
      const result = await run({ [name]: value });
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      const lines = stderrLines(result);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`testbay-server: ${name} `);
      expect(lines[0]).toMatch(accepts);
      // What it got is shown, so the mistake is plain to see; but never a secret.
      if (echoed) expect(lines[0]).toContain(`; got ${JSON.stringify(value)}`);
      else expect(result.stderr).not.toContain(value);
      expect(existsSync(untouched())).toBe(false);
    },
  );

  it("never echoes the signing key it rejects", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 })
      .privateKey.export({ type: "pkcs8", format: "pem" })
      .toString();
    const result = await run({ TESTBAY_SIGNING_KEY: rsa });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("TESTBAY_SIGNING_KEY");
    expect(result.stderr).not.toContain("PRIVATE KEY");
    expect(result.stderr).not.toContain(rsa.split("\n")[1]);
  });

  it("names every wrong variable at once", async () => {
    const result = await run({
      TESTBAY_PORT: "abc",
      TESTBAY_DATABASE_URL: "mysql://x",
      TESTBAY_RATE_LIMIT_BURST: "0",
    });
    expect(result.code).toBe(2);
    const lines = stderrLines(result);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^testbay-server: TESTBAY_PORT .*; got "abc"$/);
    expect(lines[1]).toMatch(/^testbay-server: TESTBAY_DATABASE_URL .*; got "mysql:\/\/x"$/);
    expect(lines[2]).toMatch(/^testbay-server: TESTBAY_RATE_LIMIT_BURST .*; got "0"$/);
  });
});

describe("signing keys across instances on one database", () => {
  it("with TESTBAY_SIGNING_KEY, both instances sign with that key and accept each other's tokens", async () => {
    const ws = await createWorkspace();
    const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const ci = await createClientWithCli(ws.env, "acme", "ci");
    // The database is migrated and not empty by now, so the two may start together.
    const env = { ...ws.env, TESTBAY_SIGNING_KEY: pem };
    const [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
    expect(a.url).not.toBe(b.url);

    const fromA = await accessToken(a.url, ci);
    const fromB = await accessToken(b.url, ci);
    expect((await me(b.url, fromA)).status).toBe(200);
    expect((await me(a.url, fromB)).status).toBe(200);
    // Signed by the configured key, not by one the server made up.
    await expect(compactVerify(fromA, createPublicKey(pem))).resolves.toBeDefined();
    await expect(compactVerify(fromB, createPublicKey(pem))).resolves.toBeDefined();
  });

  it("without TESTBAY_SIGNING_KEY, instances share the key generated once in the database", async () => {
    const ws = await createWorkspace();
    const ci = await createClientWithCli(ws.env, "acme", "ci");
    // Both start at once on a database that has no key yet: both try to create it, one wins.
    const [a, b] = await Promise.all([spawnServer(ws.env), spawnServer(ws.env)]);

    const fromA = await accessToken(a.url, ci);
    const fromB = await accessToken(b.url, ci);
    expect((await me(b.url, fromA)).status).toBe(200);
    expect((await me(a.url, fromB)).status).toBe(200);

    // A third instance, started later, accepts them too.
    const c = await spawnServer(ws.env);
    expect((await me(c.url, fromA)).status).toBe(200);
  });
});

describe("secrets in what the server prints", () => {
  const secret = "hunter2-Secret";
  /** Everything the command wrote, both streams. */
  const printed = (result: CliResult) => `${result.stdout}\n${result.stderr}`;

  it("shows misconfigured URLs with their passwords as ***", async () => {
    const result = await runCli(["start"], {
      TESTBAY_DATA_DIR: path.join(root, "never-created"),
      TESTBAY_PORT: "0",
      TESTBAY_DATABASE_URL: `mysql://root:${secret}@db.example.com/testbay`,
      TESTBAY_REDIS_URL: `http://default:${secret}@cache:6379`,
      TESTBAY_STORAGE_URL: `s3://blobs?region=us-east-1&secret_access_key=${secret}`,
    });
    expect(result.code).toBe(2);
    expect(stderrLines(result)).toEqual([
      expect.stringContaining('got "mysql://root:***@db.example.com/testbay"'),
      expect.stringContaining('got "http://default:***@cache:6379"'),
      expect.stringContaining('got "s3://blobs?region=us-east-1&secret_access_key=***"'),
    ]);
    expect(printed(result)).not.toContain(secret);
  });

  it("names PostgreSQL it cannot reach with the password hidden, and exits", async () => {
    for (const url of [
      `postgres://app:${secret}@127.0.0.1:1/testbay`,
      `postgres://app:${secret}@[::1/testbay`,
    ]) {
      const result = await runCli(["start"], {
        TESTBAY_DATA_DIR: path.join(root, "pg-unreachable"),
        TESTBAY_PORT: "0",
        TESTBAY_DATABASE_URL: url,
      });
      expect(result.code, url).toBe(1);
      expect(result.stderr, url).toMatch(
        /^testbay-server: cannot connect to PostgreSQL at postgres:\/\/app:\*\*\*@/,
      );
      expect(printed(result), url).not.toContain(secret);
    }
  });

  it("names a Redis URL it cannot parse with the password hidden, and exits", async () => {
    const ws = await createWorkspace();
    const result = await runCli(["start"], {
      ...ws.env,
      TESTBAY_REDIS_URL: `redis://:${secret}@[cache:6379`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot use Redis at redis://:***@[cache:6379");
    expect(printed(result)).not.toContain(secret);
  });

  it("logs a Redis that refuses its password without the password (ioredis attaches the AUTH command)", async () => {
    const ws = await createWorkspace();
    const { child, exit } = spawnBinary(["start"], {
      ...ws.env,
      TESTBAY_LOCAL_AGENT: "false",
      TESTBAY_REDIS_URL: `redis://testbay-nobody:${secret}@127.0.0.1:6379`,
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    // The limiter waits for Redis (up to 1 s) and says why it failed before the server listens.
    await withTimeout(
      new Promise<void>((resolve) => {
        const check = () => (/Testbay is listening on/.test(output) ? resolve() : setTimeout(check, 50));
        check();
      }),
      "testbay-server start with a Redis that refuses it",
    );
    child.kill("SIGTERM");
    expect(await withTimeout(exit, "testbay-server start after SIGTERM")).toBe(0);
    expect(output).toContain('"redis":"redis://testbay-nobody:***@127.0.0.1:6379"');
    expect(output).toMatch(/Redis failed; admitting requests without limit/);
    expect(output).not.toContain(secret);
  });
});

describe("the data dir of testbay-server start", () => {
  it("is 0700 with every file in it 0600, even when started under umask 000", async () => {
    const ws = await createWorkspace();
    const dataDir = path.join(ws.dataDir, "fresh");
    const env: Env = {
      ...ws.env,
      TESTBAY_DATA_DIR: dataDir,
      ...(testDatabase === "sqlite"
        ? { TESTBAY_DATABASE_URL: `sqlite:${path.join(dataDir, "testbay.db")}` }
        : {}),
    };
    // The shell sets the umask and then becomes the server, so it is the server's umask.
    const child = spawn("/bin/sh", ["-c", 'umask 000 && exec "$@"', "sh", process.execPath, bin, "start"], {
      cwd: root,
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exit = new Promise<number | null>((resolve) => child.once("close", resolve));
    running.set(child, exit);
    child.stdout.resume();
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    await withTimeout(
      new Promise<void>((resolve) => {
        const check = () => (/Testbay is listening on/.test(stderr) ? resolve() : setTimeout(check, 50));
        check();
      }),
      "testbay-server start under umask 000",
    );
    child.kill("SIGTERM");
    expect(await withTimeout(exit, "testbay-server start after SIGTERM")).toBe(0);
    running.delete(child);

    const loose: string[] = [];
    const visit = async (target: string) => {
      const stats = await stat(target);
      if ((stats.mode & 0o077) !== 0)
        loose.push(`${path.relative(dataDir, target)} ${(stats.mode & 0o777).toString(8)}`);
      if (stats.isDirectory()) for (const name of await readdir(target)) await visit(path.join(target, name));
    };
    await visit(dataDir);
    expect(loose).toEqual([]);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    if (testDatabase === "sqlite") {
      for (const file of ["testbay.db", "credentials.json"]) {
        expect((await stat(path.join(dataDir, file))).mode & 0o777).toBe(0o600);
      }
    }
  });
});
