// `testbay flank convert` and `testbay flank run` against a real Testbay server with the real APK fixtures: a
// flank.yml with orchestrator, environment variables, directories-to-pull, other-files, additional-apks,
// num-flaky-test-attempts, max-test-shards and num-test-runs. The run on devices (an agent) is the lead's
// end-to-end test; here: what is uploaded, the plan the server keeps, the triggers, the files written.
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { type CliRun, inProcessCli, sleepMovesClock } from "../../test/in-process-cli.ts";
import { Testbay } from "../sdk/client.ts";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../../server/test/fixtures/binaries/${name}`, import.meta.url));
const app = "com.example.basic";
/** app-basic.apk's versionName and versionCode (packages/server/test/fixtures/binaries/README.md). */
const version = "1.2.3+42";

let server: TestServer;
let dir: string;
let ci: { client_id: string; client_secret: string };
let admin: Testbay;
let token: string;
let duringSleep: (() => Promise<void>) | undefined;

// One token for the file's commands, as a pipeline shares one (the token endpoint is rate limited).
const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token, duringSleep }));
const calls = (run: CliRun) =>
  run.responses.filter((r) => r.path !== "/oauth/token").map((r) => `${r.method} ${r.path} ${r.status}`);

const flankYml = `gcloud:
  app: build/app-debug.apk
  test: build/app-debug-androidTest.apk
  results-bucket: acme-test-lab
  use-orchestrator: true
  environment-variables:
    clearPackageData: true
    API_URL: https://staging.example.com
  directories-to-pull:
    - /sdcard/screenshots
  other-files:
    /sdcard/fixtures/users.json: fixtures/users.json
  additional-apks:
    - build/helper.apk
  num-flaky-test-attempts: 2
  timeout: 20m
  device:
    - model: Pixel 7
      version: 34
      locale: fr_FR
      orientation: landscape

flank:
  max-test-shards: 4
  num-test-runs: 2
  local-result-dir: flank-results
`;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-cli-flank-"));
  ci = await server.createClient("acme", "ci");
  admin = new Testbay({
    baseUrl: server.baseUrl,
    clientId: ci.client_id,
    clientSecret: ci.client_secret,
    audience: server.config.audience,
    clock: sleepMovesClock(server.clock),
  });
  token = await admin.accessToken();
  await admin.apps.create({ package_name: app, platform: "android" });
  await mkdir(path.join(dir, "build"));
  await mkdir(path.join(dir, "fixtures"));
  await copyFile(fixture("app-basic.apk"), path.join(dir, "build/app-debug.apk"));
  await copyFile(fixture("app-basic-androidTest.apk"), path.join(dir, "build/app-debug-androidTest.apk"));
  await copyFile(fixture("app-other-package.apk"), path.join(dir, "build/helper.apk"));
  await writeFile(path.join(dir, "fixtures/users.json"), '{"users": ["ada"]}\n');
  await writeFile(path.join(dir, "flank.yml"), flankYml);
  await writeFile(path.join(dir, "typo.yml"), flankYml.replace("max-test-shards", "max-test-shard"));
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("testbay flank convert", () => {
  it("prints the plan with the app's package read from the APK, and one warning per unused key", async () => {
    const run = await cli(["flank", "convert"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.responses).toEqual([]);
    const plan = JSON.parse(run.stdout);
    expect(plan).toMatchObject({ package_name: app, name: "flank:flank.yml", timeout_seconds: 1200 });
    expect(run.stderr).toBe(
      "warning: flank.yml:4:3: gcloud.results-bucket is not used: Testbay keeps every run's results and each test's history itself\n",
    );
  });

  it("stops at a key outside Flank's configuration, with its line, before anything is sent (exit 2)", async () => {
    const run = await cli(["flank", "convert", "-c", "typo.yml"]);
    expect(run.code).toBe(2);
    expect(run.responses).toEqual([]);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(
      "error: typo.yml:24:3: flank.max-test-shard is not a key of Flank's configuration: did you mean max-test-shards?",
    );
    expect(run.stderr).toContain("error: typo.yml has 1 problem; nothing was sent to the server.");
  });
});

describe("testbay flank run", () => {
  it("--dry-run checks every file and says what it would do, sending nothing", async () => {
    const run = await cli(["flank", "run", "--dry-run"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.responses).toEqual([]);
    expect(run.stderr).toContain(`upload ${app} ${version} from ${path.join(dir, "build/app-debug.apk")}`);
    expect(run.stderr).toContain("upload the version file users.json from");
    expect(run.stderr).toContain("trigger it 2 times");
  });

  it("an app it cannot read (an app bundle) needs --app and --version, and says so", async () => {
    await copyFile(fixture("app-bundle.aab"), path.join(dir, "build/app.aab"));
    await writeFile(path.join(dir, "bundle.yml"), flankYml.replace("build/app-debug.apk", "build/app.aab"));
    const refused = await cli(["flank", "run", "-c", "bundle.yml", "--dry-run"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "error: gcloud.app build/app.aab: could not read its package name and version (",
    );
    expect(refused.stderr).toContain("give them with --app PACKAGE --version V.");
    const given = await cli([
      "flank",
      "run",
      "-c",
      "bundle.yml",
      "--dry-run",
      "--app",
      app,
      "--version",
      "7.0",
    ]);
    expect(given.code, given.stderr).toBe(0);
    expect(given.stderr).toContain(`upload ${app} 7.0 from ${path.join(dir, "build/app.aab")}`);
  });

  it("a file with an unknown key stops before anything is sent", async () => {
    const run = await cli(["flank", "run", "-c", "typo.yml", "--wait"]);
    expect(run.code).toBe(2);
    expect(run.responses).toEqual([]);
  });

  it("uploads build, tests and files, creates the plan, triggers it num-test-runs times", async () => {
    const run = await cli(["flank", "run", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const uploads = calls(run).filter((call) => call.startsWith("PUT"));
    expect(uploads).toEqual([
      `PUT /apps/${app}/versions/${encodeURIComponent(version)} 201`,
      `PUT /apps/${app}/versions/${encodeURIComponent(version)}/test-package 201`,
      `PUT /apps/${app}/versions/${encodeURIComponent(version)}/files/helper.apk 201`,
      `PUT /apps/${app}/versions/${encodeURIComponent(version)}/files/users.json 201`,
    ]);
    const report = JSON.parse(run.stdout);
    expect(report.plan.action).toBe("created");
    expect(report.executions).toHaveLength(2);

    const plan = await admin.testPlans.get(report.plan.id);
    expect(plan.name).toBe("flank:flank.yml");
    expect(plan.devices).toEqual([
      {
        platform: "android",
        model: "Pixel 7",
        api_level_min: 34,
        api_level_max: 34,
        locale: "fr_FR",
        orientation: "landscape",
      },
    ]);
    expect(plan.steps[0]).toMatchObject({
      type: "instrumentation",
      use_orchestrator: true,
      environment: { clearPackageData: "true", API_URL: "https://staging.example.com" },
      pull: ["/sdcard/screenshots"],
      push: [{ file: "users.json", to: "/sdcard/fixtures/users.json" }],
      additional_apks: ["helper.apk"],
      retry_failed_tests: 2,
      shards: "auto",
      max_shards: 4,
    });
    const files = await admin.versionFiles.list(app, version);
    expect(files.map((file) => file.name).sort()).toEqual(["helper.apk", "users.json"]);

    const index = JSON.parse(await readFile(path.join(dir, "flank-results/matrix_ids.json"), "utf8"));
    expect(Object.keys(index).sort()).toEqual(report.executions.map((e: { id: string }) => e.id).sort());
    expect(
      Object.values(index)
        .map((m) => (m as { run: number }).run)
        .sort(),
    ).toEqual([1, 2]);
  });

  it("run again: nothing re-uploaded, the plan unchanged", async () => {
    const run = await cli(["flank", "run"]);
    expect(run.code, run.stderr).toBe(0);
    expect(calls(run).filter((call) => call.startsWith("PUT"))).toEqual([]);
    expect(run.stderr).toMatch(/Test plan flank:flank\.yml \(tp_\w+\): unchanged\./);
  });

  it("a changed flank file updates the plan by name", async () => {
    await writeFile(
      path.join(dir, "flank.yml"),
      flankYml.replace("max-test-shards: 4", "max-test-shards: 6"),
    );
    const run = await cli(["flank", "run", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.plan.action).toBe("updated");
    expect((await admin.testPlans.get(report.plan.id)).steps[0]).toMatchObject({ max_shards: 6 });
  });

  it("--wait follows the runs and writes JUnitReport.xml and matrix_ids.json in local-result-dir", async () => {
    // No agent takes the runs here: they are cancelled while the CLI waits, and end as cancelled.
    duringSleep = async () => {
      for await (const execution of admin.executions.all({ package_name: app, status: "queued" }))
        await admin.executions.cancel(execution.id);
    };
    try {
      const run = await cli(["flank", "run", "--wait", "--timeout", "10m"]);
      expect(run.code, run.stderr).toBe(1);
      const junit = await readFile(path.join(dir, "flank-results/JUnitReport.xml"), "utf8");
      expect(junit).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites /);
      const index = JSON.parse(await readFile(path.join(dir, "flank-results/matrix_ids.json"), "utf8"));
      expect(Object.values(index).map((m) => (m as { state: string }).state)).toEqual([
        "CANCELLED",
        "CANCELLED",
      ]);
      expect(run.stderr).toContain(`Wrote ${path.join(dir, "flank-results/matrix_ids.json")}.`);
    } finally {
      duringSleep = undefined;
    }
  });
});
