// testbay plans apply / export against a real server: plans kept as code, created or updated by name, and
// --plan NAME in run and trigger.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli, sleepMovesClock } from "../../test/in-process-cli.ts";
import { Testbay } from "../sdk/client.ts";

const fixture = fileURLToPath(
  new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url),
);
const app = "com.example.basic";

let server: TestServer;
let dir: string;
let token: string;
let admin: Testbay;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;

const runCli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

/** Runs the CLI in-process; `writes` are the calls that change something (anything but GET and HEAD). */
async function cli(argv: string[]) {
  const run = await runCli(argv);
  const writes = run.responses
    .filter((c) => c.method !== "GET" && c.method !== "HEAD")
    .map((c) => `${c.method} ${c.path}`);
  return { ...run, calls: run.responses, writes };
}

const file = (name: string) => path.join(dir, name);

const plansFile = `app: ${app}
plans:
  - name: smoke
    steps:
      - type: inspect
        expect: {debuggable: false}
  - name: nightly
    devices: [{platform: android, model: Pixel 7}]
    steps:
      - type: shell
        run: ./gradlew connectedCheck
        junit: "**/TEST-*.xml"
    timeout_seconds: 3600
`;

async function serverPlans() {
  const items = [];
  for await (const plan of admin.testPlans.all({ package_name: app, limit: 200 })) items.push(plan);
  return items;
}

beforeAll(async () => {
  // Many small commands from one client: the rate limit is another test's subject.
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "1000" } });
  dir = await mkdtemp(path.join(tmpdir(), "testbay-plans-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
  const setup = await server.createClient("acme", "ci");
  admin = new Testbay({
    baseUrl: server.baseUrl,
    clientId: setup.client_id,
    clientSecret: setup.client_secret,
    clock: sleepMovesClock(server.clock),
  });
  await admin.apps.create({ package_name: app, platform: "android" });
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("testbay plans apply", () => {
  it("refuses an unknown app with the 404's fix, and an invalid file with its lines, sending nothing", async () => {
    await writeFile(file("other.yaml"), plansFile.replace(app, "com.example.unknown"));
    const unknown = await cli(["plans", "apply", "-f", "other.yaml"]);
    expect(unknown.code, unknown.stderr).toBe(4);
    expect(unknown.stderr).toMatch(/app_not_found/);
    expect(unknown.stderr).toContain("testbay apps create --app com.example.unknown");
    expect(unknown.writes).toEqual([]);

    await writeFile(
      file("bad.yaml"),
      plansFile.replace("timeout_seconds: 3600", "timeout_seconds: 3600\n    colour: red"),
    );
    const bad = await cli(["plans", "apply", "-f", "bad.yaml"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bad.yaml:14:5: plans[1].colour is not a known key");
    expect(bad.stderr).toContain("nothing was sent to the server");
    expect(bad.calls).toEqual([]);
  });

  it("creates the plans; a second apply writes nothing; an edit updates the changed fields only", async () => {
    await writeFile(file("testbay.yaml"), plansFile);
    const dryRun = await cli(["plans", "apply", "-f", "testbay.yaml", "--dry-run"]);
    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(dryRun.stderr).toMatch(/^would create {2}smoke {4}-$/m);
    expect(dryRun.writes).toEqual([]);
    expect(await serverPlans()).toEqual([]);

    const first = await cli(["plans", "apply", "-f", "testbay.yaml", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.writes).toEqual(["POST /testplans", "POST /testplans"]);
    expect(first.stderr).toMatch(/^created {2}smoke {4}tp_\w+$/m);
    expect(first.stderr).toMatch(/^created {2}nightly {2}tp_\w+$/m);
    expect(first.stderr).toContain(`${app}: 2 created.`);
    const json = JSON.parse(first.stdout);
    expect(json).toMatchObject({ app, dry_run: false, exit_code: 0 });
    const plans = await serverPlans();
    const byName = new Map(plans.map((p) => [p.name, p]));
    expect(json.plans).toEqual([
      { name: "smoke", id: byName.get("smoke")?.id, action: "created" },
      { name: "nightly", id: byName.get("nightly")?.id, action: "created" },
    ]);
    expect(byName.get("nightly")).toMatchObject({ timeout_seconds: 3600, max_attempts: 1 });

    const second = await cli(["plans", "apply", "-f", "testbay.yaml"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.writes).toEqual([]);
    expect(second.stderr).toContain(`${app}: 2 unchanged.`);

    await writeFile(
      file("testbay.yaml"),
      plansFile.replace("connectedCheck", "connectedAndroidTest").replace("3600", "2400"),
    );
    const edited = await cli(["plans", "apply", "-f", "testbay.yaml"]);
    expect(edited.code, edited.stderr).toBe(0);
    const nightly = byName.get("nightly")?.id;
    expect(edited.writes).toEqual([`PATCH /testplans/${nightly}`]);
    expect(edited.stderr).toMatch(
      new RegExp(`^updated {4}nightly {2}${nightly} {2}\\(steps, timeout_seconds\\)$`, "m"),
    );
    expect(edited.stderr).toMatch(/^unchanged {2}smoke {4}tp_\w+$/m);
    expect((await admin.testPlans.get(nightly ?? "")).timeout_seconds).toBe(2400);
  });

  it("restores an archived plan of the name, and --prune archives the plans the file does not name", async () => {
    const smoke = (await serverPlans()).find((p) => p.name === "smoke");
    await admin.testPlans.archive(smoke?.id ?? "");
    const extra = await admin.testPlans.create({
      name: "legacy",
      package_name: app,
      steps: smoke?.steps ?? [],
    });

    const restored = await cli(["plans", "apply", "-f", "testbay.yaml"]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.writes).toEqual([`POST /testplans/${smoke?.id}/restore`]);
    expect(restored.stderr).toMatch(/^restored {3}smoke/m);
    expect((await admin.testPlans.get(smoke?.id ?? "")).state).toBe("active");

    const dryPrune = await cli(["plans", "apply", "-f", "testbay.yaml", "--prune", "--dry-run"]);
    expect(dryPrune.writes).toEqual([]);
    expect(dryPrune.stderr).toMatch(/^would archive {2}legacy/m);

    const pruned = await cli(["plans", "apply", "-f", "testbay.yaml", "--prune", "--json"]);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.writes).toEqual([`POST /testplans/${extra.id}/archive`]);
    expect(pruned.stderr).toContain(
      `(not in testbay.yaml; --prune; restorable with POST /v1/testplans/${extra.id}/restore)`,
    );
    expect(JSON.parse(pruned.stdout).plans).toContainEqual({
      name: "legacy",
      id: extra.id,
      action: "archived",
    });
    expect((await admin.testPlans.get(extra.id)).state).toBe("archived");
  });

  it("shows the server's 400 about a plan at the file's line", async () => {
    await writeFile(file("ios.yaml"), plansFile.replace("platform: android", "platform: ios"));
    const refused = await cli(["plans", "apply", "-f", "ios.yaml"]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(
      "ios.yaml:8:26: plans[1].devices[0].platform must be android, the app's platform",
    );
    expect(refused.stderr).toMatch(/invalid_request/);
  });

  it("stops when two active plans on the server share a name, naming them, and changes nothing", async () => {
    const twin = await admin.testPlans.create({
      name: "smoke",
      package_name: app,
      steps: [{ type: "shell", run: "true" }],
    });
    await writeFile(file("twins.yaml"), plansFile.replace("3600", "1200"));
    const refused = await cli(["plans", "apply", "-f", "twins.yaml"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `twins.yaml:3:11: plans[0].name "smoke" names 2 active plans on the server`,
    );
    expect(refused.stderr).toContain(twin.id);
    expect(refused.writes).toEqual([]);
    await admin.testPlans.delete(twin.id);
  });
});

describe("testbay plans export", () => {
  it("writes the active plans as testbay.yaml; applying that file changes nothing", async () => {
    const printed = await cli(["plans", "export", "--app", app]);
    expect(printed.code, printed.stderr).toBe(0);
    const origin = server.baseUrl.replace(/\/v1$/, "");
    expect(printed.stdout.split("\n")[0]).toBe(
      `# yaml-language-server: $schema=${origin}/downloads/testbay.schema.json`,
    );
    // Sorted by name, defaults written out, the schema's key order.
    expect(printed.stdout).toMatch(/- name: nightly\n {4}devices:\n/);
    expect(printed.stdout).toMatch(/- name: smoke\n {4}devices: \[\]\n {4}steps:\n {6}- type: inspect\n/);
    expect(printed.stdout).toMatch(/ {4}timeout_seconds: 1800\n {4}max_attempts: 1\n/);
    expect(printed.stdout).not.toContain("legacy");

    const written = await cli(["plans", "export", "--app", app, "-f", "exported.yaml"]);
    expect(written.code, written.stderr).toBe(0);
    expect(await readFile(file("exported.yaml"), "utf8")).toBe(printed.stdout);
    const again = await cli(["plans", "export", "--app", app, "-f", "exported.yaml"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("add --force to overwrite it");
    expect((await cli(["plans", "export", "--app", app, "-f", "exported.yaml", "--force"])).code).toBe(0);

    const applied = await cli(["plans", "apply", "-f", "exported.yaml"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.writes).toEqual([]);
    expect(applied.stderr).toContain(`${app}: 2 unchanged.`);
  });
});

describe("--plan NAME", () => {
  it("run --plan smoke triggers the active plan of that name; an unknown name lists the names", async () => {
    const smoke = (await serverPlans()).find((p) => p.name === "smoke" && p.state === "active");
    const run = await cli([
      "run",
      "--app",
      app,
      "--version",
      "1.0.0",
      "--file",
      fixture,
      "--plan",
      "smoke",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).executions.map((e: { test_plan_id: string }) => e.test_plan_id)).toEqual([
      smoke?.id,
    ]);

    const unknown = await cli(["trigger", "--app", app, "--version", "1.0.0", "--plan", "smoek"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      `--plan smoek: no active test plan of that name (${app}'s active plans: nightly, smoke).`,
    );
    expect(unknown.writes).toEqual([]);

    // IDs need no lookup: no list call.
    const byId = await cli(["trigger", "--app", app, "--version", "1.0.0", "--plan", smoke?.id ?? ""]);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.calls.filter((c) => c.path.startsWith("/testplans"))).toEqual([]);
  });
});
