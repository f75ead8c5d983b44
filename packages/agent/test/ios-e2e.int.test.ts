import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { type AgentProcess, startAgentProcess, stopAgentProcesses, waitFor } from "./agent-process.ts";
import {
  type AppleLab,
  type AppleLabOptions,
  buildAppArchive,
  buildTestPackageZip,
  createAppleLab,
} from "./stand-ins/apple-lab.ts";
import { createDeviceLab, type DeviceLab } from "./stand-ins/device-lab.ts";

// The iOS path end to end: an IPA and the zip of `xcodebuild build-for-testing` output uploaded to a real
// server, an xcuitest plan triggered, a real `testbay-agent --devices auto` finding the stand-in simulators with
// xcrun and running the plan on them with xcodebuild, and the results read back as a user would. No Mac, no
// simulator and no Xcode is involved: xcrun and xcodebuild are the stateful stand-ins of test/stand-ins, whose
// result bundles have the JSON shapes of recorded xcresulttool output (test/fixtures/apple/SOURCES.md).

const APP = "com.example.shop";
const TARGET = "ShopUITests";
const sim = (udid: string, state: "Shutdown" | "Booted" = "Shutdown") => ({
  udid,
  name: "iPhone 15",
  runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5",
  state,
});
const UDID_A = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01";
const UDID_B = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B02";

let server: TestServer;
let ci: Record<string, string>;
let agentCredentials: { client_id: string; client_secret: string };
let scratch: string;
const running: ChildProcess[] = [];
let lab: AppleLab | undefined;
let noAndroid: DeviceLab | undefined;

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-ios-"));
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agentCredentials = await server.createClient("acme", "agent");
  const created = await call(`${server.baseUrl}/apps`, {
    headers: ci,
    json: { package_name: APP, platform: "ios", display_name: "Shop" },
  });
  expect(created.status).toBe(201);
  const app = { bundleId: APP, name: "Shop" };
  const ipa = buildAppArchive(scratch, app, "ipa");
  const tests = buildTestPackageZip(scratch, { app, targets: [{ name: TARGET, ui: true }] });
  for (const version of ["1.0.0"]) {
    const uploaded = await fetch(`${server.baseUrl}/apps/${APP}/versions/${version}`, {
      method: "PUT",
      headers: { ...ci, "content-type": "application/octet-stream" },
      body: await readFile(ipa),
    });
    expect(uploaded.status, await uploaded.clone().text()).toBe(201);
    const testPackage = await fetch(`${server.baseUrl}/apps/${APP}/versions/${version}/test-package`, {
      method: "PUT",
      headers: { ...ci, "content-type": "application/octet-stream" },
      body: await readFile(tests),
    });
    expect(testPackage.status, await testPackage.clone().text()).toBe(201);
  }
});

afterEach(async () => {
  await stopAgentProcesses(running);
  lab?.cleanup();
  lab = undefined;
  noAndroid?.cleanup();
  noAndroid = undefined;
});

afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

async function createLab(options: AppleLabOptions): Promise<AppleLab> {
  lab = await createAppleLab({ timeScale: 0.02, ...options });
  // The stand-ins' folder holds adb too: an adb with no devices, as on a Mac that has one installed.
  noAndroid = await createDeviceLab({ devices: [] });
  return lab;
}

function startAgent(name: string, args: string[] = []): AgentProcess {
  return startAgentProcess({
    name,
    baseUrl: server.baseUrl,
    audience: server.config.audience,
    credentials: agentCredentials,
    scratch,
    args: ["--devices", "auto", ...args],
    env: { ...noAndroid?.env, ...lab?.env, PATH: lab?.env.PATH ?? "" },
    running,
  });
}

async function trigger(step: Record<string, unknown>, options: { max_attempts?: number } = {}) {
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `ios ${Math.random()}`,
      package_name: APP,
      devices: [{ platform: "ios", model: "iPhone 15" }],
      steps: [{ type: "xcuitest", ...step }],
      ...options,
    },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: APP, version: "1.0.0" },
  });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  return run.body.execution.id as string;
}

const execution = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
const finished = (id: string, agent: AgentProcess) =>
  waitFor(`execution ${id} to finish`, async () => {
    const view = await execution(id);
    return !["queued", "running"].includes(view.status) && view;
  }).catch(async (error) => {
    console.log(agent.output(), JSON.stringify(await execution(id), null, 1));
    throw error;
  });
/** A test case as GET /executions/{id}/tests shows it. */
interface TestView {
  classname: string;
  name: string;
  status: string;
  flaky: boolean;
  message: string | null;
  device: { serial: string; platform: string; model: string; os_version: string };
  attempts: Array<{ status: string }>;
  artifacts: string[];
}
const testsOf = async (id: string): Promise<TestView[]> =>
  (await call(`${server.baseUrl}/executions/${id}/tests`, { headers: ci })).body.items as TestView[];
const xcodebuildRuns = (l: AppleLab) =>
  l
    .calls()
    .filter((c) => c.tool === "xcodebuild" && !c.argv.includes("-enumerate-tests"))
    .map((c) => c.argv);

describe("an xcuitest plan on an iOS simulator (stand-in)", () => {
  it("boots the simulator, installs the app before the run, and reports a failure with its screenshot", async () => {
    const l = await createLab({
      simulators: [sim(UDID_A)],
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass", log: ["form shown"] },
            {
              class: "LoginTests",
              method: "testRejects",
              outcome: "fail",
              message: "XCTAssertTrue failed - still on sign in",
            },
            { class: "CartTests", method: "testAdds", outcome: "pass" },
          ],
        },
      },
    });
    const id = await trigger({});
    const agent = startAgent("mac-1");
    const view = await finished(id, agent);
    expect(view).toMatchObject({
      status: "failed",
      summary: { tests: 3, passed: 2, failed: 1 },
      devices: [{ status: "failed", agent_id: "mac-1" }],
    });

    // Booted and installed before xcodebuild ran.
    const calls = l.calls().map((c) => `${c.tool} ${c.argv.slice(0, 2).join(" ")}`);
    const installAt = calls.indexOf("xcrun simctl install");
    expect(calls.indexOf("xcrun simctl boot")).toBeGreaterThan(-1);
    expect(calls.indexOf("xcrun simctl boot")).toBeLessThan(installAt);
    expect(installAt).toBeLessThan(calls.findIndex((c) => c.startsWith("xcodebuild test-without-building")));
    // simctl's install, then xcodebuild's own from the test products (the xctestrun's UITargetAppPath).
    expect(l.installed(UDID_A)[APP]?.installs).toBe(2);

    const tests = await testsOf(id);
    expect(tests.map((t) => `${t.classname}#${t.name} ${t.status}`).sort()).toEqual([
      `${TARGET}.CartTests#testAdds passed`,
      `${TARGET}.LoginTests#testRejects failed`,
      `${TARGET}.LoginTests#testSignsIn passed`,
    ]);
    const failure = tests.find((t) => t.status === "failed") as TestView;
    expect(failure).toMatchObject({
      message: expect.stringContaining("XCTAssertTrue failed - still on sign in"),
      device: { platform: "ios", serial: UDID_A, model: "iPhone 15", os_version: "17.5" },
    });
    const folder = `device-${UDID_A}`;
    expect(failure.artifacts).toEqual(
      expect.arrayContaining([
        `${folder}/screenshots/${TARGET}.LoginTests.testRejects.png`,
        `${folder}/device-log.txt`,
      ]),
    );
    const fetchArtifact = (name: string) =>
      fetch(`${server.baseUrl}/executions/${id}/artifacts/${name}`, { headers: ci });
    const png = Buffer.from(
      await (await fetchArtifact(`${folder}/screenshots/${TARGET}.LoginTests.testRejects.png`)).arrayBuffer(),
    );
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(await (await fetchArtifact(`${folder}/device-log.txt`)).text()).toContain("form shown");
    // A failure keeps the video (record_video on_failure), finished by SIGINT: its moov box is there.
    expect(failure.artifacts).toContain(`${folder}/video/part-01.mp4`);
    const video = Buffer.from(await (await fetchArtifact(`${folder}/video/part-01.mp4`)).arrayBuffer());
    expect(video.subarray(4, 8).toString("latin1")).toBe("ftyp");
    expect(video.includes(Buffer.from("moov", "latin1"))).toBe(true);
  });

  it("hands the run back when the simulator crashes, and finishes it on the next attempt with no failure recorded", async () => {
    const l = await createLab({
      simulators: [sim(UDID_A)],
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass" },
            { class: "LoginTests", method: "testSignsOut", outcome: "pass" },
          ],
        },
      },
    });
    l.crash(UDID_A);
    const id = await trigger({}, { max_attempts: 2 });
    const agent = startAgent("mac-2");
    const view = await finished(id, agent);
    expect(view).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 2, failed: 0 },
      devices: [{ attempt: 2, status: "passed" }],
    });
    for (const test of await testsOf(id)) {
      expect(test.attempts.every((a: { status: string }) => a.status === "passed")).toBe(true);
    }
    expect(l.simulators()[0]).toMatchObject({ crashes: 1 });
    expect(agent.output()).toMatch(/device_lost/);
  });

  it("reruns a failed test alone with -only-testing, and a pass on the rerun makes it flaky", async () => {
    const l = await createLab({
      simulators: [sim(UDID_A, "Booted")],
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass" },
            { class: "CartTests", method: "testFlaky", outcomes: ["fail", "pass"] },
          ],
        },
      },
    });
    const id = await trigger({ retry_failed_tests: 2 });
    const agent = startAgent("mac-3");
    const view = await finished(id, agent);
    expect(view).toMatchObject({ status: "passed", summary: { tests: 2, passed: 2, failed: 0, flaky: 1 } });
    const flaky = (await testsOf(id)).find((t) => t.name === "testFlaky") as TestView;
    expect(flaky).toMatchObject({ status: "passed", flaky: true });
    expect(flaky.attempts.map((a: { status: string }) => a.status)).toEqual(["failed", "passed"]);
    const runs = xcodebuildRuns(l);
    expect(runs).toHaveLength(2);
    expect(runs[1]?.filter((a) => a.startsWith("-only-testing:"))).toEqual([
      `-only-testing:${TARGET}/CartTests/testFlaky`,
    ]);
    expect(l.testRuns(UDID_A)[`${TARGET}/CartTests/testFlaky`]).toBe(2);
  });

  it("splits the tests over two simulators, each batch run with -only-testing", async () => {
    const methods = ["testA", "testB", "testC", "testD"];
    const l = await createLab({
      simulators: [sim(UDID_A), sim(UDID_B)],
      suites: {
        [TARGET]: {
          tests: methods.map((method) => ({ class: "ShardTests", method, outcome: "pass" as const })),
        },
      },
    });
    const id = await trigger({ shards: 2, sharding: "uniform" });
    const agent = startAgent("mac-4", ["--concurrency", "2"]);
    const view = await finished(id, agent);
    expect(view).toMatchObject({ status: "passed", summary: { tests: 4, passed: 4 } });
    expect(view.devices).toHaveLength(2);
    const tests = await testsOf(id);
    expect(tests.map((t) => t.name).sort()).toEqual(methods);
    const selected = xcodebuildRuns(l).flatMap((argv) => argv.filter((a) => a.startsWith("-only-testing:")));
    expect(selected.sort()).toEqual(methods.map((m) => `-only-testing:${TARGET}/ShardTests/${m}`));
    expect(new Set(tests.map((t) => t.device.serial))).toEqual(new Set([UDID_A, UDID_B]));
  });
});
