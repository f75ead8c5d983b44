// `testbay-server start` as a process, as a new user runs it: the lines it prints, the credentials it makes,
// how it ends on SIGTERM, a port already taken, the umask it is started under. Everything that does not need
// the process itself runs in the tests' process: admin-commands.int.test.ts, start-failures.int.test.ts.

import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  accessToken,
  clientNames,
  createWorkspace,
  type Env,
  localAgentClientIds,
  me,
  runBin,
  severalRunsMs,
  signIn,
  spawnServer,
  stderrLines,
  useCliSuite,
} from "../../test/cli-harness.ts";
import { call, testDatabase } from "../../test/harness.ts";
import { openDatabase } from "../db/kysely.ts";

useCliSuite();

describe("testbay-server start", () => {
  // The credentials file is the embedded default's: on PostgreSQL clients come from the admin CLI
  // (start-failures.int.test.ts, "on PostgreSQL, creates no credentials file").
  if (testDatabase !== "sqlite") return;

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

  it(
    "on a second start of the same store, keeps the credentials and creates none",
    async () => {
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
    },
    severalRunsMs,
  );
});

describe("testbay-server start with a TESTBAY_ variable it does not know", () => {
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

describe("testbay-server start on a port in use", () => {
  it("says which port, how to choose another, and exits non-zero", async () => {
    const ws = await createWorkspace();
    // Whatever holds the port; a listening socket of this process is as good as a first Testbay.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    try {
      const address = holder.address();
      const port = typeof address === "object" && address ? address.port : 0;
      const second = await runBin(["start"], { ...ws.env, TESTBAY_PORT: String(port) });
      expect(second.code).toBe(1);
      expect(stderrLines(second)).toEqual([
        `testbay-server: port ${port} is in use: set TESTBAY_PORT=${port + 1} (or another free port) or stop the other process`,
      ]);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
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
    const server = await spawnServer(env, { shell: 'umask 000 && exec "$@"' });
    expect(await server.stop()).toBe(0);

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
