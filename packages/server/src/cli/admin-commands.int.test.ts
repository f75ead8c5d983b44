// The admin commands for organizations and clients, and `migrate`, run in the tests' process
// (cli/run-server-cli.ts) exactly as the bin runs them: their exit codes, what they print on stdout and
// stderr, and what they change in the store and for a running server. bin.int.test.ts checks that the bin
// hands exit codes and output through unchanged.
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import {
  accessToken,
  type ClientCredentials,
  createClientWithCli,
  createStore,
  createWorkspace,
  me,
  requestToken,
  root,
  runCli,
  startInProcess,
  stderrLines,
  useCliSuite,
  usingLine,
  type Workspace,
} from "../../test/cli-harness.ts";
import { testDatabase } from "../../test/harness.ts";
import { systemClock } from "../clock.ts";
import { migrateToLatest, openDatabase } from "../db/kysely.ts";
import { migrations } from "../db/migrations/index.ts";
import { ClientsRepo, ClientsService } from "../features/clients/index.ts";

useCliSuite();

describe("admin commands without a store", () => {
  it("in a directory without .testbay: exit 2 naming TESTBAY_DATA_DIR and what to do; no file is created", async () => {
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
  });

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

describe("testbay-server client disable", () => {
  it("stops the client's existing tokens at once and refuses it new ones", async () => {
    const ws = await createWorkspace();
    const ci = await createClientWithCli(ws.env, "ops", "ci");
    const server = await startInProcess(ws.env);
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
  it("lets a disabled client get tokens again, but not use the ones it had before", async () => {
    const ws = await createWorkspace();
    const ci = await createClientWithCli(ws.env, "ops", "ci");
    const server = await startInProcess(ws.env);
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
  });

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
  it("prints a new secret once; the old secret and the tokens issued before stop working at once", async () => {
    const ws = await createWorkspace();
    const ci = await createClientWithCli(ws.env, "ops", "ci");
    const server = await startInProcess(ws.env);
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
    expect(stderrLines(result)).toEqual([
      expect.stringMatching(usingLine(ws)),
      `Client ${ci.client_id} has a new secret; the old one and the tokens issued with it no longer work.`,
    ]);

    const stale = await me(server.url, before);
    expect(stale.status).toBe(401);
    expect(stale.body).toMatchObject({ code: "invalid_access_token", reason: "token_revoked" });
    expect((await requestToken(server.url, ci)).body).toMatchObject({ reason: "invalid_client" });
    const fresh = await accessToken(server.url, rotated);
    expect((await me(server.url, fresh)).body).toMatchObject({ client_id: ci.client_id, role: "ci" });

    const stored = await runCli(["client", "list", "--json"], ws.env);
    expect(stored.stdout).not.toContain(rotated.client_secret);
  });

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
  it("list organizations and clients as a table or as JSON, never with a secret or its hash", async () => {
    const ws = await createWorkspace();
    // Set up directly: only the listing is under test.
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
      max_concurrent_device_runs: null,
    });
    const orgTable = (await runCli(["org", "list"], ws.env)).stdout.trimEnd().split("\n");
    expect(orgTable[0]).toMatch(/^ID +NAME +CREATED +MAX RUNNING$/);
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
        all_orgs: false,
      },
      {
        client_id: globexAgent.client_id,
        name: null,
        org: "globex",
        role: "agent",
        created_at: expect.stringMatching(/Z$/),
        disabled_at: expect.stringMatching(/Z$/),
        all_orgs: false,
      },
    ]);
    const onlyAcme = JSON.parse((await runCli(["client", "list", "--org", "acme", "--json"], ws.env)).stdout);
    expect(onlyAcme.map((c: { client_id: string }) => c.client_id)).toEqual([acmeCi.client_id]);

    const table = await runCli(["client", "list"], ws.env);
    const lines = table.stdout.trimEnd().split("\n");
    // The name last: it may hold blanks, and the columns before it stay one word each.
    expect(lines[0]).toMatch(/^CLIENT ID +ORG +ROLE +SERVES +CREATED +DISABLED +NAME$/);
    expect(lines[1]).toMatch(new RegExp(`^${acmeCi.client_id} +acme +ci +own-org +\\S+Z +- +nightly CI$`));
    expect(lines[2]).toMatch(
      new RegExp(`^${globexAgent.client_id} +globex +agent +own-org +\\S+Z +\\S+Z +-$`),
    );
    expect(stderrLines(table)).toEqual([expect.stringMatching(usingLine(ws))]);
    for (const output of [table.stdout, JSON.stringify(all)]) {
      expect(output).not.toContain(acmeCi.client_secret);
      expect(output).not.toMatch(/scrypt|tbs_/);
    }
  });

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
});

describe("a fleet shared by organizations (API.md §15)", () => {
  it("client create --all-orgs makes an agent client that serves every organization, shown in client list", async () => {
    const ws = await createStore();
    expect((await runCli(["org", "create", "platform"], ws.env)).code).toBe(0);
    const created = await runCli(
      ["client", "create", "--org", "platform", "--role", "agent", "--all-orgs", "--name", "shared fleet"],
      ws.env,
    );
    expect(created.code, created.stderr).toBe(0);
    const fleet = JSON.parse(created.stdout);
    expect(fleet).toMatchObject({ org: "platform", role: "agent", name: "shared fleet", all_orgs: true });
    const own = JSON.parse(
      (await runCli(["client", "create", "--org", "platform", "--role", "agent"], ws.env)).stdout,
    );
    expect(own.all_orgs).toBeUndefined();

    const listed = JSON.parse((await runCli(["client", "list", "--json"], ws.env)).stdout);
    expect(listed.map((c: { client_id: string; all_orgs: boolean }) => [c.client_id, c.all_orgs])).toEqual([
      [fleet.client_id, true],
      [own.client_id, false],
    ]);
    const table = (await runCli(["client", "list"], ws.env)).stdout.trimEnd().split("\n");
    expect(table[1]).toMatch(
      new RegExp(`^${fleet.client_id} +platform +agent +all-orgs +\\S+Z +- +shared fleet$`),
    );
    expect(table[2]).toMatch(new RegExp(`^${own.client_id} +platform +agent +own-org +`));

    const ci = await runCli(["client", "create", "--org", "platform", "--role", "ci", "--all-orgs"], ws.env);
    expect(ci.code).toBe(1);
    expect(ci.stderr).toContain("--all-orgs is for agent clients");
  });

  it("org set-limits caps an organization's running device runs, and none lifts the cap", async () => {
    const ws = await createStore();
    expect((await runCli(["org", "create", "mobile"], ws.env)).code).toBe(0);
    const set = await runCli(["org", "set-limits", "mobile", "--max-concurrent-device-runs", "4"], ws.env);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ name: "mobile", max_concurrent_device_runs: 4 });
    const table = (await runCli(["org", "list"], ws.env)).stdout.trimEnd().split("\n");
    expect(table[1]).toMatch(/ +mobile +\S+Z +4$/);

    const lifted = await runCli(
      ["org", "set-limits", "mobile", "--max-concurrent-device-runs", "none"],
      ws.env,
    );
    expect(JSON.parse(lifted.stdout)).toMatchObject({ name: "mobile", max_concurrent_device_runs: null });
    expect(JSON.parse((await runCli(["org", "list", "--json"], ws.env)).stdout)[0]).toMatchObject({
      max_concurrent_device_runs: null,
    });

    for (const wrong of ["0", "-1", "two", "1.5"]) {
      const refused = await runCli(
        ["org", "set-limits", "mobile", "--max-concurrent-device-runs", wrong],
        ws.env,
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('a whole number of at least 1, or "none"');
    }
    const unknown = await runCli(["org", "set-limits", "nope", "--max-concurrent-device-runs", "2"], ws.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Organization "nope" does not exist');
  });
});
