import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../client/src/cli/main.ts";
import { call } from "../../server/test/harness.ts";
import { waitFor } from "./agent-process.ts";
import { androidServer } from "./android-server.ts";
import type { Suite } from "./stand-ins/device-lab.ts";

// Issue 29 end to end (API.md §14), as a team coming from Firebase Test Lab runs it: `testbay flank run --wait`
// on the flank.yml they already have, against a real server and a real `testbay-agent` (with --android-tools) on
// two stand-in emulators. Each Flank key is looked for where it should show: the orchestrator's command and the
// -e arguments on the device, other-files pushed before and directories-to-pull pulled after, the additional APK
// installed, the flaky test rerun, the tests split over max-test-shards devices, and JUnitReport.xml where Flank
// writes it. On SQLite here and on PostgreSQL with two instances in the scaled project (vitest.config.ts).

const binaries = fileURLToPath(new URL("../../server/test/fixtures/binaries/", import.meta.url));
const TOOLS = fileURLToPath(new URL("./fixtures/tool-apks/", import.meta.url));
const TEST_PACKAGE = "com.example.basic.test";
const login = "com.example.basic.LoginTest";
const cart = "com.example.basic.CartTest";
const SERIALS = ["emulator-5554", "emulator-5556"];

const android = androidServer({ versions: [] });
let dir: string;
let credentials: { client_id: string; client_secret: string };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-flank-run-"));
  credentials = await android.server.createClient("acme", "ci");
  const app = await call(`${android.server.baseUrl}/apps`, {
    headers: android.ci,
    json: { package_name: "com.example.basic", platform: "android" },
  });
  expect(app.status).toBe(201);
  await copyFile(path.join(binaries, "app-basic.apk"), path.join(dir, "app-debug.apk"));
  await copyFile(
    path.join(binaries, "app-basic-androidTest.apk"),
    path.join(dir, "app-debug-androidTest.apk"),
  );
  await copyFile(path.join(TOOLS, "helper.apk"), path.join(dir, "helper.apk"));
  await writeFile(path.join(dir, "users.json"), '{"users":["ann"]}');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

class Captured {
  text = "";
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
}

async function testbay(argv: string[]) {
  const stdout = new Captured();
  const stderr = new Captured();
  const code = await main(argv, {
    env: {
      TESTBAY_URL: android.server.baseUrl,
      TESTBAY_CLIENT_ID: credentials.client_id,
      TESTBAY_CLIENT_SECRET: credentials.client_secret,
      CI: "true",
    },
    stdout,
    stderr,
    cwd: dir,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const flankYml = `# A team's Firebase Test Lab configuration, kept as it was.
gcloud:
  app: ./app-debug.apk
  test: ./app-debug-androidTest.apk
  use-orchestrator: true
  environment-variables:
    clearPackageData: true
    user.name: ann
  directories-to-pull:
    - /sdcard/screenshots
  other-files:
    /sdcard/Download/users.json: ./users.json
  additional-apks:
    - ./helper.apk
  num-flaky-test-attempts: 1
  record-video: false
  device:
    - version: 34
      locale: fr_FR
      orientation: portrait
  results-bucket: acme-test-lab
flank:
  max-test-shards: 2
  local-result-dir: flank-results
`;

const suite: Suite = {
  tests: [
    {
      class: login,
      method: "signsIn",
      outcome: "pass",
      duration_ms: 100,
      writes: { "/sdcard/screenshots/signsIn.png": "a" },
    },
    { class: login, method: "flaky", outcomes: ["fail", "pass"], duration_ms: 100 },
    { class: cart, method: "addsItem", outcome: "pass", duration_ms: 100 },
    { class: cart, method: "checksOut", outcome: "pass", duration_ms: 100 },
  ],
};

describe("testbay flank run on a team's flank.yml (real server and agent, stand-in emulators)", () => {
  it("stops at an unknown key, naming its line, before anything is sent", async () => {
    await writeFile(
      path.join(dir, "typo.yml"),
      flankYml.replace("num-flaky-test-attempts", "num-flaky-tests"),
    );
    const run = await testbay(["flank", "run", "-c", "typo.yml", "--wait"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/typo\.yml:\d+/);
    expect(run.stderr).toContain("num-flaky-tests");
    const versions = await call(`${android.server.baseUrl}/apps/com.example.basic/versions`, {
      headers: android.ci,
    });
    expect(versions.body.items).toEqual([]);
  });

  it("runs it unchanged: orchestrator, -e variables, pushed and pulled files, the extra APK, retries, shards", async () => {
    await writeFile(path.join(dir, "flank.yml"), flankYml);
    const lab = await android.createLab({
      devices: SERIALS.map((serial) => ({
        serial,
        model: "Pixel 7",
        release: "14",
        sdk: 34,
        emulator: true,
      })),
      suites: { [TEST_PACKAGE]: suite },
      timeScale: 0.02,
    });
    android.startAgent("rack-1", lab.env, ["--android-tools", TOOLS, "--concurrency", "2"]);
    // max-test-shards is Flank's most: with no history the run takes that many when as many devices are online.
    await waitFor("both emulators offered", async () => {
      const agents = await call(`${android.server.baseUrl}/agents`, { headers: android.ci });
      const rack = agents.body.items.find((a: { name: string }) => a.name === "rack-1");
      return rack?.devices?.length === 2;
    });

    const run = await testbay(["flank", "run", "-c", "flank.yml", "--wait"]);
    expect(run.stderr).toContain("results-bucket");
    expect(run.code, run.stdout + run.stderr).toBe(0);

    // The plan named after the file, as `testbay flank convert` prints it.
    const plans = await call(`${android.server.baseUrl}/testplans?package_name=com.example.basic`, {
      headers: android.ci,
    });
    const plan = plans.body.items.find((p: { name: string }) => p.name === "flank:flank.yml");
    expect(plan).toBeDefined();
    const executions = await call(`${android.server.baseUrl}/executions?test_plan_id=${plan.id}`, {
      headers: android.ci,
    });
    expect(executions.body.items).toHaveLength(1);
    const id = executions.body.items[0].id as string;
    const view = (await call(`${android.server.baseUrl}/executions/${id}`, { headers: android.ci })).body;
    expect(view).toMatchObject({ status: "passed", summary: { tests: 4, passed: 4, failed: 0, flaky: 1 } });
    expect(view.devices).toHaveLength(2);

    // other-files and additional-apks became the version's files.
    const files = await call(
      `${android.server.baseUrl}/apps/com.example.basic/versions/${view.version}/files`,
      { headers: android.ci },
    );
    expect(files.body.items.map((f: { name: string }) => f.name).sort()).toEqual([
      "helper.apk",
      "users.json",
    ]);

    for (const serial of SERIALS) {
      const commands = lab
        .calls()
        .filter((c) => c.tool === "adb" && c.serial === serial)
        .map((c) => c.argv.slice(2).join(" "));
      const installs = commands.filter((c) => c.startsWith("install ")).map((c) => path.basename(c));
      expect(installs).toEqual(expect.arrayContaining(["orchestrator-1.5.1.apk", "test-services-1.5.0.apk"]));
      expect(installs.some((name) => name.endsWith("helper.apk"))).toBe(true);
      expect(lab.files(serial)["/sdcard/Download/users.json"]?.toString()).toBe('{"users":["ann"]}');
      const runs = commands.filter((c) => c.includes("am instrument")).slice(1);
      expect(runs.length).toBeGreaterThan(0);
      for (const r of runs) {
        expect(r).toContain("androidx.test.services.shellexecutor.ShellMain am instrument");
        expect(r).toContain("androidx.test.orchestrator/.AndroidTestOrchestrator");
        expect(r).toContain("-e 'clearPackageData' 'true'");
        expect(r).toContain("-e 'user.name' 'ann'");
      }
      expect(commands.findIndex((c) => c.startsWith("pull /sdcard/screenshots "))).toBeGreaterThan(
        commands.findLastIndex((c) => c.includes("am instrument")),
      );
    }

    // The flaky test was rerun alone and passed; the pulled screenshot kept under its shard.
    const tests = (await call(`${android.server.baseUrl}/executions/${id}/tests`, { headers: android.ci }))
      .body.items;
    expect(tests.find((t: { name: string }) => t.name === "flaky")).toMatchObject({ flaky: true });
    const artifacts = (
      await call(`${android.server.baseUrl}/executions/${id}/artifacts`, { headers: android.ci })
    ).body;
    const names: string[] = (artifacts.items ?? artifacts).map((a: { name: string }) => a.name);
    expect(names).toEqual(
      expect.arrayContaining([expect.stringMatching(/^pulled\/[01]\/sdcard\/screenshots\/signsIn\.png$/)]),
    );

    // Flank's result layout where the file said.
    const junit = await readFile(path.join(dir, "flank-results", "JUnitReport.xml"), "utf8");
    expect(junit).toContain("<testsuites");
    for (const name of ["signsIn", "flaky", "addsItem", "checksOut"])
      expect(junit).toContain(`name="${name}"`);
    const index = JSON.parse(await readFile(path.join(dir, "flank-results", "matrix_ids.json"), "utf8"));
    expect(JSON.stringify(index)).toContain(id);
  });
});
