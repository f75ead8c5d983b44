import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { waitFor } from "./agent-process.ts";
import { IOS_APP as APP, iosServer, iPhone15 as sim } from "./ios-server.ts";
import { type AppleLab, buildAppArchive, buildTestPackageZip } from "./stand-ins/apple-lab.ts";

// The iOS path end to end: an IPA and the zip of `xcodebuild build-for-testing` output uploaded to a real
// server, an xcuitest plan triggered, a real `testbay-agent --devices auto` finding the stand-in simulators with
// xcrun and running the plan on them with xcodebuild, and the results read back as a user would. No Mac, no
// simulator and no Xcode is involved: xcrun and xcodebuild are the stateful stand-ins of test/stand-ins, whose
// result bundles have the JSON shapes of recorded xcresulttool output (test/fixtures/apple/SOURCES.md).

const TARGET = "ShopUITests";
const UDID_A = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01";
const UDID_B = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B02";

const ios = iosServer((scratch) => {
  const app = { bundleId: APP, name: "Shop" };
  return {
    app: buildAppArchive(scratch, app, "ipa"),
    testPackage: buildTestPackageZip(scratch, { app, targets: [{ name: TARGET, ui: true }] }),
  };
});
const { createLab, startAgent, finished } = ios;
const trigger = (step: Record<string, unknown>, options: { max_attempts?: number } = {}) =>
  ios.trigger({ type: "xcuitest", ...step }, { device: { platform: "ios", model: "iPhone 15" }, ...options });

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
  (await call(`${ios.server.baseUrl}/executions/${id}/tests`, { headers: ios.ci })).body.items as TestView[];
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
    // simctl's install (xcodebuild then installs the app the xctestrun's UITargetAppPath names: the agent points
    // it at the .app it unpacked from the version's IPA, ios-tested-app.int.test.ts checks which build ran).
    expect(l.installs(UDID_A).map((i) => i.bundleId)).toEqual([APP]);
    // API.md §13: a simulator the agent does not manage keeps nothing of the run: the app and the UI tests'
    // runner are uninstalled after it.
    await waitFor("the app and the runner uninstalled", async () => {
      const left = Object.keys(l.installed(UDID_A));
      return !left.includes(APP) && !left.some((bundle) => bundle.endsWith(".xctrunner"));
    });
    expect(
      l
        .calls()
        .filter((c) => c.argv[1] === "uninstall")
        .map((c) => c.argv.at(-1)),
    ).toEqual([APP, `${APP}.${TARGET}.xctrunner`]);

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
      fetch(`${ios.server.baseUrl}/executions/${id}/artifacts/${name}`, { headers: ios.ci });
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
