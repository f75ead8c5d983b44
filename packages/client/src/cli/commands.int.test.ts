// The CLI's smaller commands against a real server: --version, apps, plans list, status, logs, junit,
// artifacts, cancel and agents, each as a person reads it and as --json.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli, sleepMovesClock } from "../../test/in-process-cli.ts";
import { Captured } from "../../test/scripted-server.ts";
import { Testbay } from "../sdk/client.ts";
import { main } from "./main.ts";

const fixture = fileURLToPath(
  new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url),
);
const app = "com.example.basic";

let server: TestServer;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let token: string;

// One token for the whole file, as a pipeline shares one: token calls count toward the rate limit.
const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-commands-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("testbay commands", () => {
  it("--version prints the package's version and nothing else, without credentials", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
    const stdout = new Captured();
    const stderr = new Captured();
    expect(await main(["--version"], { env: {}, stdout, stderr })).toBe(0);
    expect(stdout.text).toBe(`${pkg.version}\n`);
    expect(stderr.text).toBe("");
    const viaCommand = await cli(["version"]);
    expect(viaCommand.stdout).toBe(`${pkg.version}\n`);
  });

  it("apps create, then apps list; an unknown platform is a usage error", async () => {
    const wrong = await cli(["apps", "create", "--app", app, "--platform", "windows"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--platform windows: say android or ios.");

    const created = await cli(["apps", "create", "--app", app, "--platform", "android", "--name", "Basic"]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(
      `Created android app ${app}. Next: testbay upload --app ${app} --version VERSION --file PATH`,
    );
    const again = await cli(["apps", "create", "--app", app, "--platform", "android"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/app_exists/);

    const listed = await cli(["apps", "list"]);
    expect(listed.stdout).toMatch(/PACKAGE\s+PLATFORM\s+NAME\s+CREATED\n/);
    expect(listed.stdout).toMatch(/com\.example\.basic\s+android\s+Basic\s+\d{4}-/);
    const json = JSON.parse((await cli(["apps", "list", "--json"])).stdout);
    expect(json.items.map((a: { package_name: string }) => a.package_name)).toEqual([app]);
  });

  it("status, logs, junit, artifacts and cancel of one execution; plans list; agents", async () => {
    const setup = await server.createClient("acme", "ci");
    const admin = new Testbay({
      baseUrl: server.baseUrl,
      clientId: setup.client_id,
      clientSecret: setup.client_secret,
      clock: sleepMovesClock(server.clock),
    });
    await admin.versions.upload({ packageName: app, version: "1.0.0", file: fixture });
    const plan = await admin.testPlans.create({
      name: "smoke",
      package_name: app,
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    });
    const plans = await cli(["plans", "list", "--app", app]);
    expect(plans.stdout).toMatch(new RegExp(`${plan.id}\\s+smoke\\s+com\\.example\\.basic\\s+active`));

    const triggered = JSON.parse(
      (await cli(["trigger", "--app", app, "--version", "1.0.0", "--plan", plan.id, "--json"])).stdout,
    );
    const id: string = triggered.executions[0].id;

    const status = await cli(["status", id]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`${id}\\s+${plan.id}\\s+queued`));

    const logs = await cli(["logs", id]);
    expect(logs.code, logs.stderr).toBe(0);
    const artifacts = await cli(["artifacts", id]);
    expect(artifacts.code, artifacts.stderr).toBe(0);
    expect(artifacts.stdout).toBe(`No artifacts for ${id}.\n`);

    const cancelled = await cli(["cancel", id]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stderr).toContain(`${id} is cancelled.`);
    expect(cancelled.stdout).toMatch(new RegExp(`${id}\\s+${plan.id}\\s+cancelled`));
    const twice = await cli(["cancel", id]);
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stderr).toContain(`${id} is cancelled.`);

    const junit = await cli(["junit", id, "--output", "report.xml"]);
    expect(junit.code, junit.stderr).toBe(0);
    expect(await readFile(path.join(dir, "report.xml"), "utf8")).toMatch(/^<\?xml/);

    const unknown = await cli(["logs", "ex_unknown"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/execution_not_found/);

    const agents = await cli(["agents", "--json"]);
    expect(agents.code, agents.stderr).toBe(0);
    expect(JSON.parse(agents.stdout)).toMatchObject({ items: [], exit_code: 0 });
    expect((await cli(["agents"])).stdout).toBe("No agents have connected: start one with testbay-agent.\n");
  });
});
