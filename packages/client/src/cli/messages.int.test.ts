// What the CLI says when something is wrong, against a real server (CLIENT.md rule 14): an archived plan is
// called archived with the command that restores it, an unknown app is called unknown with the closest
// registered name, a URL without /v1 is called that, each detail and fix is printed once, and the generic word
// on what a 404 means appears only where nothing more precise is known. Also plans archive and plans restore.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli } from "../../test/in-process-cli.ts";

const app = "com.example.basic";
const inspect = { type: "inspect", expect: { debuggable: false } };

let server: TestServer;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
/** The test's own calls: another client, so they do not spend the CLI's rate limit. */
let headers: Record<string, string>;
/** The CLI's token, shared by its commands as a pipeline shares one. */
let token: string;

const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

async function createPlan(name: string, packageName = app, steps: unknown[] = [inspect]): Promise<string> {
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers,
    json: { name, package_name: packageName, steps },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);
  return plan.body.id;
}

const planState = async (id: string) =>
  (await call(`${server.baseUrl}/testplans/${id}`, { headers })).body.state;

/** How many times `text` occurs in `output`. */
const occurrences = (output: string, text: string) => output.split(text).length - 1;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-cli-messages-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
  headers = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  await registerBasicApp(server, headers);
  await call(`${server.baseUrl}/apps`, {
    headers,
    json: { package_name: "com.example.shop", platform: "android" },
  });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("what the CLI says", () => {
  it("calls a base URL without /v1 what it is, with the URL to use, and no word on 404s", async () => {
    const run = await cli(["plans", "list"], { env: { TESTBAY_URL: server.origin } });
    expect(run.code).toBe(4);
    const [error, fix] = run.stderr.split("\n");
    expect(error).toBe(
      `error: TESTBAY_URL ${server.origin} is not the API's address: it must end in /v1 (the server answered 404 route_not_found to GET /testplans).`,
    );
    expect(fix).toBe(`  fix: export TESTBAY_URL=${server.origin}/v1 (or --url ${server.origin}/v1)`);
    expect(run.stderr).not.toMatch(/A 404 means|is not an endpoint/);
  });

  it("calls a plan named by an archived plan's name archived, with the command that restores it", async () => {
    const id = await createPlan("nightly");
    expect(
      (await call(`${server.baseUrl}/testplans/${id}/archive`, { method: "POST", headers })).status,
    ).toBe(200);
    const run = await cli(["trigger", "--app", app, "--version", "1.2.3", "--plan", "nightly"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `error: --plan nightly: the test plan nightly (${id}) of ${app} is archived. Restore it with testbay plans restore ${id}, then run this again.\n`,
    );
    expect(run.responses.filter((r) => r.path === "/testplan/run/batch")).toEqual([]);
  });

  it("archives and restores a plan by name or ID, asking for --app when two apps have a plan of that name", async () => {
    const basic = await createPlan("smoke");
    const shop = await createPlan("smoke", "com.example.shop");

    const ambiguous = await cli(["plans", "archive", "smoke"]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toBe(
      `error: 2 test plans are named smoke: ${app} (${basic}), com.example.shop (${shop}); name the app with --app PACKAGE, or the plan by its ID.\n`,
    );

    const archived = await cli(["plans", "archive", "smoke", "--app", app]);
    expect(archived.code, archived.stderr).toBe(0);
    expect(archived.stderr).toContain(
      `Archived test plan smoke (${basic}) of ${app}: it is not triggered any more. Restore it with testbay plans restore ${basic}`,
    );
    expect(archived.stdout).toMatch(new RegExp(`^${basic}\\s+smoke\\s+${app}\\s+archived`, "m"));
    expect(await planState(basic)).toBe("archived");
    expect(await planState(shop)).toBe("active");

    const again = await cli(["plans", "archive", "smoke", "--app", app]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(
      `the test plan smoke (${basic}) of ${app} is archived already: nothing to do.`,
    );

    // Only one archived plan has the name: no --app needed.
    const restored = await cli(["plans", "restore", "smoke", "--json"]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toContain(
      `Restored test plan smoke (${basic}) of ${app}: it can be triggered again.`,
    );
    expect(JSON.parse(restored.stdout)).toMatchObject({ id: basic, state: "active", exit_code: 0 });
    expect(await planState(basic)).toBe("active");

    const byId = await cli(["plans", "archive", shop]);
    expect(byId.code, byId.stderr).toBe(0);
    expect(await planState(shop)).toBe("archived");
  });

  it("calls an unknown app unknown, with the closest registered package name", async () => {
    const byName = await cli([
      "trigger",
      "--app",
      "com.example.basik",
      "--version",
      "1.2.3",
      "--plan",
      "smoke",
    ]);
    expect(byName.code).toBe(2);
    expect(byName.stderr).toBe(
      "error: --app com.example.basik: unknown app com.example.basik; did you mean com.example.basic? (package names are exact and case-sensitive).\n",
    );
    expect(byName.stderr).not.toMatch(/no active plans|A 404 means/);

    const byId = await cli(["plans", "archive", "tp_01NOSUCHPLAN", "--app", "com.example.basik"]);
    expect(byId.code).toBe(4);

    const upload = await cli([
      "trigger",
      "--app",
      "com.example.basik",
      "--version",
      "1.2.3",
      "--plan",
      "tp_01NOSUCHPLAN",
    ]);
    expect(upload.code).toBe(4);
    expect(upload.stderr).toMatch(
      /^error: unknown app com\.example\.basik; did you mean com\.example\.basic\?/,
    );
    expect(upload.stderr).not.toMatch(/A 404 means/);

    const far = await cli(["trigger", "--app", "org.unrelated.thing", "--version", "1", "--plan", "smoke"]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain(
      "unknown app org.unrelated.thing: testbay apps list shows the registered ones",
    );
    expect(far.stderr).not.toMatch(/did you mean/);
  });

  it("prints a plan's missing test package once: its detail, its fix and the command, no word on 404s", async () => {
    const id = await createPlan("instrumented", app, [{ type: "instrumentation" }]);
    const run = await cli(["trigger", "--app", app, "--version", "1.2.3", "--plan", id]);
    expect(run.code, run.stderr).toBe(3);
    const [failure] = JSON.parse(
      (await cli(["trigger", "--app", app, "--version", "1.2.3", "--plan", id, "--json"])).stdout,
    ).error.failed_executions;
    expect(failure.code).toBe("test_package_not_found");
    expect(occurrences(run.stderr, failure.detail)).toBe(1);
    expect(occurrences(run.stderr, failure.fix)).toBe(1);
    // The server's fix names the command already: it is not said a second time.
    expect(occurrences(run.stderr, "testbay upload --app com.example.basic --version 1.2.3")).toBe(1);
    expect(run.stderr).not.toMatch(/A 404 means/);
  });
});
