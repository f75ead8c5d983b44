import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { startAgentProcess, stopAgentProcesses, waitFor } from "./agent-process.ts";
import { createDeviceLab, type DeviceLab, type Outcome, type SuiteTest } from "./stand-ins/device-lab.ts";

// Sharding end to end (issue 15): a real server, a real `testbay-agent` process with three stand-in devices,
// each shard a device run on its own device. Which tests each device ran is read from the devices themselves:
// the stand-in counts each device's runs of every test with `outcomes` (listings are not runs).

const TEST_PACKAGE = "com.example.basic.test";
const SERIALS = ["emulator-5554", "emulator-5556", "emulator-5558"];

let server: TestServer;
let ci: Record<string, string>;
let agentCredentials: { client_id: string; client_secret: string };
let scratch: string;
let lab: DeviceLab | undefined;
const running: ChildProcess[] = [];

interface TestItem {
  classname: string;
  name: string;
  status: string;
  flaky: boolean;
  shard: number;
  device: { serial: string | null };
  attempts: Array<{ attempt: number; retry: number; status: string }>;
}

const suite = (n: number, durationMs: number, flaky: string | null = null): SuiteTest[] =>
  Array.from({ length: n }, (_, i) => ({
    class: `com.example.basic.Feature${Math.floor(i / 3)}Test`,
    method: `case${i}`,
    outcomes: (`case${i}` === flaky ? ["fail", "pass"] : ["pass"]) as Outcome[],
    duration_ms: durationMs,
  }));
const key = (t: { class: string; method: string }) => `${t.class}#${t.method}`;

async function start(tests: SuiteTest[], step: Record<string, unknown>) {
  lab = await createDeviceLab({
    devices: SERIALS.map((serial) => ({ serial, model: "Pixel 7", release: "14", sdk: 34 })),
    suites: { [TEST_PACKAGE]: { tests } },
    timeScale: 0.05,
  });
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `shards ${Math.random()}`,
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "instrumentation", record_video: "never", ...step }],
    },
  });
  expect(plan.status).toBe(201);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.0.0" },
  });
  expect(run.status).toBe(200);
  const id = run.body.execution.id as string;
  startAgentProcess({
    name: "rack-1",
    baseUrl: server.baseUrl,
    audience: server.config.audience,
    credentials: agentCredentials,
    scratch,
    args: ["--devices", "auto", "--concurrency", "3"],
    env: lab.env,
    running,
  });
  return { id, lab };
}

async function finished(id: string) {
  const view = await waitFor(`execution ${id} to finish`, async () => {
    const body = (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
    return !["queued", "running"].includes(body.status) && body;
  });
  const tests = (await call(`${server.baseUrl}/executions/${id}/tests`, { headers: ci })).body
    .items as TestItem[];
  return { view, tests };
}

/** Each device's test runs, by serial: "Class#method" → runs. */
const runsBy = (l: DeviceLab) => Object.fromEntries(SERIALS.map((s) => [s, l.testRuns(s)]));

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-android-shards-"));
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agentCredentials = await server.createClient("acme", "agent");
  await registerBasicApp(server, ci, "1.0.0");
  await uploadBasicTestPackage(server, ci, "1.0.0");
});

afterEach(async () => {
  await stopAgentProcesses(running);
  lab?.cleanup();
  lab = undefined;
});

afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

describe("shards on Android devices (stand-in)", () => {
  it("3 shards on three devices run disjoint lists whose union is the listed set, each test once", async () => {
    const tests = suite(12, 400);
    const { id, lab } = await start(tests, { shards: 3, sharding: "uniform" });
    const { view, tests: items } = await finished(id);
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 12, passed: 12, failed: 0 });
    expect(view.devices).toHaveLength(3);

    const runs = runsBy(lab);
    const ranOn = SERIALS.map((serial) => Object.keys(runs[serial] ?? {}).sort());
    // uniform: a fixed list of 4 per shard, so every device ran some; none ran a test twice, none another's.
    expect(ranOn.map((list) => list.length)).toEqual([4, 4, 4]);
    for (const serial of SERIALS) expect(Object.values(runs[serial] ?? {}).every((n) => n === 1)).toBe(true);
    expect(ranOn.flat().sort()).toEqual(tests.map(key).sort());
    // Each device ran exactly the batch files it was handed (pushed, then run with -e testFile).
    for (const serial of SERIALS) {
      const argv = lab
        .calls()
        .filter((c) => c.serial === serial)
        .map((c) => c.argv.slice(2).join(" "));
      expect(argv.filter((a) => a.includes("'testFile'"))).toHaveLength(1);
      expect(argv.filter((a) => a.startsWith("push "))).toHaveLength(1);
    }

    // The results say the same, each test once with the shard (and device) of the run that ran it.
    expect(items).toHaveLength(12);
    expect(items.map((t) => `${t.classname}#${t.name}`).sort()).toEqual(tests.map(key).sort());
    const shardOf = new Map<string, number>();
    for (const item of items) {
      const serial = item.device.serial as string;
      expect(Object.keys(runs[serial] ?? {})).toContain(`${item.classname}#${item.name}`);
      expect(shardOf.get(serial) ?? item.shard).toBe(item.shard);
      shardOf.set(serial, item.shard);
    }
    expect([...shardOf.values()].sort()).toEqual([0, 1, 2]);
  });

  it("a device unplugged mid-run hands its remaining tests to the others: every test reported once", async () => {
    const tests = suite(18, 3000);
    const { id, lab } = await start(tests, { shards: 3 });
    // The first device to start a batch goes away in the middle of it.
    const lost = await waitFor("a device to start a batch", async () => {
      const call = lab.calls().find((c) => c.argv.join(" ").includes("'testFile'"));
      return call?.serial ?? undefined;
    });
    lab.unplug(lost);
    const { view, tests: items } = await finished(id);
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 18, passed: 18, failed: 0 });
    // The lost device's run was handed back and ran again (a second attempt) on a device still there.
    const attempts = view.devices.map((d: { attempt: number }) => d.attempt).sort();
    expect(attempts).toEqual([1, 1, 2]);

    expect(items).toHaveLength(18);
    expect(items.map((t) => `${t.classname}#${t.name}`).sort()).toEqual(tests.map(key).sort());
    for (const item of items) {
      expect(item.status).toBe("passed");
      expect(item.device.serial).not.toBe(lost);
    }
    // Every test ran on a device still there; the lost one ran at most the batch it was in.
    const runs = runsBy(lab);
    const survivors = SERIALS.filter((s) => s !== lost);
    const ranOnSurvivors = survivors.flatMap((s) => Object.keys(runs[s] ?? {}));
    expect(new Set(ranOnSurvivors)).toEqual(new Set(tests.map(key)));
  });

  it("with retry_failed_tests, a flaky test in a shard is flaky and counted once", async () => {
    const tests = suite(9, 400, "case4");
    const { id, lab } = await start(tests, { shards: 3, sharding: "uniform", retry_failed_tests: 2 });
    const { view, tests: items } = await finished(id);
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 9, passed: 9, failed: 0, flaky: 1 });
    expect(items).toHaveLength(9);
    const flaky = items.find((t) => t.name === "case4") as TestItem;
    expect(flaky).toMatchObject({ status: "passed", flaky: true });
    expect(flaky.attempts.map((a) => [a.retry, a.status])).toEqual([
      [0, "failed"],
      [1, "passed"],
    ]);
    // Rerun alone on the device of its shard, nowhere else.
    const runs = runsBy(lab);
    const where = SERIALS.filter((s) => runs[s]?.[`${tests[4]?.class}#case4`] !== undefined);
    expect(where).toEqual([flaky.device.serial]);
    expect(runs[where[0] as string]?.[`${tests[4]?.class}#case4`]).toBe(2);
    expect(items.filter((t) => t.flaky)).toHaveLength(1);
  });
});
