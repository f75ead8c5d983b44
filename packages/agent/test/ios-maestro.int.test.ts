import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { IOS_APP as APP, iosServer, iPhone15 as sim } from "./ios-server.ts";
import { type AppleLab, buildAppArchive } from "./stand-ins/apple-lab.ts";

// Maestro on iOS end to end: a zipped .app uploaded to a real server, a plan with a maestro step on
// `{platform: "ios"}`, a real `testbay-agent --devices auto` finding the stand-in simulators with xcrun, booting
// one and installing the app with simctl before maestro runs the flows on it (maestro's launchApp installs
// nothing). The maestro stand-in runs on the same simulators: it launches only what simctl installed there, and
// decides each flow's outcome by the stand-in's rule (an assertVisible of "FAIL…" fails; "FAIL nx …" fails the
// flow's first n runs on that simulator). No Mac, simulator, Xcode or maestro is involved.

const UDID_A = "9A1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B0A";
const UDID_B = "9A1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B0B";

// A zipped Shop.app, the other form of iOS app Testbay takes besides an IPA. Maestro needs no test package.
const ios = iosServer((scratch) => ({
  app: buildAppArchive(scratch, { bundleId: APP, name: "Shop" }, "zip"),
}));
const { createLab, startAgent, finished } = ios;
const trigger = (step: Record<string, unknown>, options: { max_attempts?: number } = {}) =>
  ios.trigger({ type: "maestro", ...step }, options);

interface TestView {
  name: string;
  status: string;
  flaky: boolean;
  message: string | null;
  stack_trace: string | null;
  device: { serial: string; platform: string };
  attempts: Array<{ status: string }>;
}
const testsOf = async (id: string): Promise<TestView[]> =>
  (await call(`${ios.server.baseUrl}/executions/${id}/tests`, { headers: ios.ci })).body.items as TestView[];

/** The lab's calls as "tool sub-command" (xcrun's tool and verb, maestro's device), in the order made. */
const callLines = (l: AppleLab) =>
  l.calls().map((c) => {
    const tool = c.tool as string;
    if (tool === "maestro") return `maestro ${c.argv[c.argv.indexOf("--device") + 1]}`;
    return `${tool} ${c.argv.slice(0, 2).join(" ")} ${tool === "xcrun" ? (c.argv[2] ?? "") : ""}`.trim();
  });

const flow = (name: string, assertion = "Welcome") =>
  `appId: ${APP}\nname: ${name}\n---\n- launchApp\n- tapOn: "Sign in"\n- assertVisible: "${assertion}"\n`;

describe("a maestro plan on an iOS simulator (stand-ins)", () => {
  it("boots the simulator and installs the app before maestro runs, then reports each flow as maestro did", async () => {
    const l = await createLab({ simulators: [sim(UDID_A)] });
    const id = await trigger({ flows: [flow("Login"), flow("Checkout", "FAIL Order confirmed")] });
    const agent = startAgent("mac-maestro-1");
    const view = await finished(id, agent);
    expect(view).toMatchObject({
      status: "failed",
      summary: { tests: 2, passed: 1, failed: 1 },
      devices: [{ status: "failed", agent_id: "mac-maestro-1" }],
    });

    const calls = callLines(l);
    const maestroAt = calls.indexOf(`maestro ${UDID_A}`);
    expect(maestroAt).toBeGreaterThan(-1);
    expect(calls.indexOf(`xcrun simctl boot ${UDID_A}`)).toBeGreaterThan(-1);
    expect(calls.indexOf(`xcrun simctl boot ${UDID_A}`)).toBeLessThan(
      calls.indexOf(`xcrun simctl install ${UDID_A}`),
    );
    expect(calls.indexOf(`xcrun simctl install ${UDID_A}`)).toBeLessThan(maestroAt);
    expect(l.installs(UDID_A).map((i) => i.bundleId)).toEqual([APP]);
    expect(l.simulators()[0]).toMatchObject({ state: "Booted" });

    const tests = await testsOf(id);
    expect(tests.map((t) => `${t.name} ${t.status}`).sort()).toEqual(["Checkout failed", "Login passed"]);
    expect(tests.find((t) => t.name === "Checkout")).toMatchObject({
      message: expect.stringContaining('Assertion is false: "FAIL Order confirmed" is visible'),
      device: { serial: UDID_A, platform: "ios" },
    });
    // Each flow ran once on the simulator; Login passed because the app was there to launch.
    expect(l.testRuns(UDID_A)).toEqual({ "flow:Login": 1, "flow:Checkout": 1 });
  });

  it("fails the flows of an app the simulator does not have: the bundle id maestro is given is the one installed", async () => {
    const l = await createLab({ simulators: [sim(UDID_A, "Booted")] });
    const id = await trigger({
      flows: [`appId: com.example.other\nname: Other\n---\n- launchApp\n`, flow("Login")],
    });
    const agent = startAgent("mac-maestro-2");
    const view = await finished(id, agent);
    expect(view).toMatchObject({ status: "failed", summary: { tests: 2, passed: 1, failed: 1 } });
    const other = (await testsOf(id)).find((t) => t.name === "Other");
    // simctl's error is two lines, its cause on the second: the message is both, as is the stack trace.
    const simctlError =
      "An error was encountered processing the command (domain=FBSOpenApplicationServiceErrorDomain, code=4):\n" +
      "Simulator device failed to launch com.example.other.";
    expect(other).toMatchObject({
      status: "failed",
      message: simctlError,
      stack_trace: expect.stringContaining(simctlError),
    });
    // Only the version's app was installed; another app cannot be launched.
    expect(l.installs(UDID_A).map((i) => i.bundleId)).toEqual([APP]);
  });

  it("reruns a failed flow alone with retry_failed_tests, and a pass on the rerun makes it flaky", async () => {
    const l = await createLab({ simulators: [sim(UDID_A, "Booted")] });
    const id = await trigger({
      flows: [flow("Login"), flow("Cart", "FAIL 1x Cart shown")],
      retry_failed_tests: 2,
    });
    const agent = startAgent("mac-maestro-3");
    const view = await finished(id, agent);
    expect(view).toMatchObject({ status: "passed", summary: { tests: 2, passed: 2, failed: 0, flaky: 1 } });
    const cart = (await testsOf(id)).find((t) => t.name === "Cart") as TestView;
    expect(cart).toMatchObject({ status: "passed", flaky: true });
    expect(cart.attempts.map((a) => a.status)).toEqual(["failed", "passed"]);
    // The first run and the rerun alone, on the same simulator; Login ran once.
    expect(l.testRuns(UDID_A)).toEqual({ "flow:Login": 1, "flow:Cart": 2 });
    const calls = callLines(l);
    expect(calls.indexOf(`xcrun simctl install ${UDID_A}`)).toBeLessThan(calls.indexOf(`maestro ${UDID_A}`));
  });

  it("hands the run back when the simulator goes down during the flows, and finishes it on the next attempt", async () => {
    const l = await createLab({ simulators: [sim(UDID_A)] });
    l.crash(UDID_A);
    const id = await trigger({ flows: [flow("Login"), flow("Cart")] }, { max_attempts: 2 });
    const agent = startAgent("mac-maestro-5");
    const view = await finished(id, agent);
    expect(view).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 2, failed: 0 },
      devices: [{ attempt: 2, status: "passed" }],
    });
    for (const test of await testsOf(id)) expect(test.attempts.map((a) => a.status)).toEqual(["passed"]);
    expect(l.simulators()[0]).toMatchObject({ crashes: 1, state: "Booted" });
    expect(agent.output()).toMatch(/device_lost/);
  });

  it("with retry_failed_tests, a simulator lost during a flow's run hands the run back instead of retrying the flow", async () => {
    const l = await createLab({ simulators: [sim(UDID_A)] });
    l.crash(UDID_A);
    const id = await trigger(
      { flows: [flow("Login"), flow("Cart")], retry_failed_tests: 2 },
      { max_attempts: 2 },
    );
    const agent = startAgent("mac-maestro-6");
    const view = await finished(id, agent);
    expect(view).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 2, failed: 0, flaky: 0 },
      devices: [{ attempt: 2, status: "passed" }],
    });
    for (const test of await testsOf(id)) {
      expect(test).toMatchObject({ status: "passed", flaky: false });
      expect(test.attempts.map((a) => a.status)).toEqual(["passed"]);
    }
    expect(l.simulators()[0]).toMatchObject({ crashes: 1 });
  });

  it("splits the flows over two simulators, each with the app installed before its first maestro run", async () => {
    const names = ["Login", "Search", "Cart", "Checkout"];
    const l = await createLab({ simulators: [sim(UDID_A), sim(UDID_B)] });
    const id = await trigger({ flows: names.map((name) => flow(name)), shards: 2, sharding: "uniform" });
    const agent = startAgent("mac-maestro-4", ["--concurrency", "2"]);
    const view = await finished(id, agent);
    expect(view).toMatchObject({ status: "passed", summary: { tests: 4, passed: 4, failed: 0 } });
    expect(view.devices).toHaveLength(2);

    const tests = await testsOf(id);
    expect(tests.map((t) => t.name).sort()).toEqual([...names].sort());
    expect(new Set(tests.map((t) => t.device.serial))).toEqual(new Set([UDID_A, UDID_B]));
    // Each flow ran once, on the simulator the server says ran it; both simulators had some.
    const runs: Record<string, Record<string, number>> = {
      [UDID_A]: l.testRuns(UDID_A),
      [UDID_B]: l.testRuns(UDID_B),
    };
    const ran = Object.values(runs).flatMap((r) => Object.entries(r));
    expect(ran.map(([key]) => key).sort()).toEqual(names.map((name) => `flow:${name}`).sort());
    expect(ran.every(([, n]) => n === 1)).toBe(true);
    for (const test of tests) expect(runs[test.device.serial]).toHaveProperty([`flow:${test.name}`], 1);
    const calls = callLines(l);
    for (const udid of [UDID_A, UDID_B]) {
      expect(l.installs(udid).map((i) => i.bundleId)).toContain(APP);
      expect(calls.indexOf(`xcrun simctl install ${udid}`)).toBeGreaterThan(-1);
      expect(calls.indexOf(`xcrun simctl install ${udid}`)).toBeLessThan(calls.indexOf(`maestro ${udid}`));
    }
  });
  it("a simulator lost in a shard hands its flows back: every flow passes once, none is counted failed", async () => {
    const names = ["Login", "Search", "Cart", "Checkout"];
    const l = await createLab({ simulators: [sim(UDID_A), sim(UDID_B)] });
    l.crash(UDID_A);
    const id = await trigger(
      { flows: names.map((name) => flow(name)), shards: 2, sharding: "uniform" },
      { max_attempts: 2 },
    );
    const agent = startAgent("mac-maestro-7", ["--concurrency", "2"]);
    const view = await finished(id, agent);
    expect(view).toMatchObject({ status: "passed", summary: { tests: 4, passed: 4, failed: 0 } });
    const tests = await testsOf(id);
    expect(tests.map((t) => t.name).sort()).toEqual([...names].sort());
    for (const test of tests) expect(test.attempts.map((a) => a.status)).toEqual(["passed"]);
    expect(l.simulators().find((s) => s.udid === UDID_A)).toMatchObject({ crashes: 1 });
    expect(agent.output()).toMatch(/device_lost/);
  });
});
