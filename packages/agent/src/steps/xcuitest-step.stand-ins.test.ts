// The xcuitest step on the stateful xcrun and xcodebuild stand-ins (test/stand-ins: simulators that boot,
// keep what was installed and crash; result bundles in the JSON shapes of recorded xcresulttool output): the
// real command lines, files and texts, without a server.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { XcuitestStep } from "@testbay/client";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../test/agent-process.ts";
import {
  type AppleLab,
  type AppleLabOptions,
  buildAppArchive,
  buildTestPackageZip,
  createAppleLab,
} from "../../test/stand-ins/apple-lab.ts";
import { XcodeTools } from "../apple/xcrun.ts";
import type { TestPackageInfo } from "./step-types.ts";
import { makeStepContext, type TestStepContext } from "./test-context.ts";
import { runXcuitestStep } from "./xcuitest-step.ts";

const UDID = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01";
const APP = { bundleId: "com.example.shop", name: "Shop" };
const TARGET = "ShopUITests";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setUp(options: AppleLabOptions, kind: "ipa" | "zip" = "ipa") {
  const lab = await createAppleLab({ timeScale: 0.02, ...options });
  cleanups.push(() => lab.cleanup());
  const files = await mkdtemp(join(tmpdir(), "testbay-xcuitest-files-"));
  cleanups.push(() => rm(files, { recursive: true, force: true }));
  const app = buildAppArchive(files, APP, kind);
  const tests = buildTestPackageZip(files, { app: APP, targets: [{ name: TARGET, ui: true }] });
  const ctx: TestStepContext = await makeStepContext({
    device: { serial: UDID, platform: "ios", model: "iPhone 15", os_version: "17.5" },
    binary: {
      format: kind === "ipa" ? "ipa" : "app",
      platform: "ios",
      package_name: APP.bundleId,
      version_name: "1.0",
      version_code: "1",
      min_sdk: null,
      target_sdk: null,
      min_os_version: "16.0",
      abis: [],
      permissions: [],
      debuggable: false,
      display_name: "Shop",
    },
    packageName: APP.bundleId,
    appPath: async () => app,
    testPackage: {
      format: "xctest",
      sha256: "x",
      size_bytes: 1,
      test: {
        xctestrun: "Shop_iphonesimulator18.0-arm64.xctestrun",
        test_targets: [{ name: TARGET, bundle_id: null, ui_target_app: APP.bundleId }],
      },
    } as TestPackageInfo,
    testPackagePath: async () => tests,
  });
  cleanups.push(() => ctx.cleanup());
  const tools = new XcodeTools({
    workDir: ctx.workDir,
    signal: ctx.signal,
    log: ctx.log,
    env: { ...process.env, ...lab.env },
  });
  return { lab, ctx, tools };
}

const simulator = { udid: UDID, name: "iPhone 15", runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5" };
const step = (options: Partial<XcuitestStep> = {}): XcuitestStep => ({ type: "xcuitest", ...options });
const runs = (lab: AppleLab) =>
  lab
    .calls()
    .filter((c) => c.tool === "xcodebuild" && !c.argv.includes("-enumerate-tests"))
    .map((c) => c.argv);

describe("the xcuitest step on the xcrun and xcodebuild stand-ins", () => {
  it("boots, installs, runs and reports each test; a failure keeps its screenshot, the device log and the video", async () => {
    const { lab, ctx, tools } = await setUp({
      simulators: [simulator],
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass", log: ["form shown"] },
            {
              class: "LoginTests",
              method: "testRejects",
              outcome: "fail",
              message: "XCTAssertTrue failed - on sign in",
            },
            { class: "CartTests", method: "testOld", outcome: "skip" },
          ],
        },
      },
    });
    const outcome = await runXcuitestStep(step({ record_video: "always" }), ctx, { tools });
    expect(outcome, ctx.lines("agent").join("\n")).toEqual({
      status: "failed",
      message: "1 of 3 test cases failed",
    });
    expect(lab.simulators()[0]?.state).toBe("Booted");
    // The app went on with simctl before xcodebuild ran (which installs it again from the test products, as
    // an xctestrun with UITargetAppPath makes it do).
    const calls = lab.calls().map((c) => `${c.tool} ${c.argv.slice(0, 2).join(" ")}`);
    expect(calls.indexOf("xcrun simctl install")).toBeGreaterThan(-1);
    expect(calls.indexOf("xcrun simctl install")).toBeLessThan(
      calls.findIndex((c) => c.startsWith("xcodebuild test-without-building")),
    );
    expect(lab.installed(UDID)[APP.bundleId]?.installs).toBe(2);

    const byName = new Map(ctx.cases.map((c) => [`${c.classname}#${c.name}`, c]));
    expect([...byName.keys()].sort()).toEqual([
      `${TARGET}.CartTests#testOld`,
      `${TARGET}.LoginTests#testRejects`,
      `${TARGET}.LoginTests#testSignsIn`,
    ]);
    expect(byName.get(`${TARGET}.CartTests#testOld`)?.status).toBe("skipped");
    const failure = byName.get(`${TARGET}.LoginTests#testRejects`);
    expect(failure).toMatchObject({
      status: "failed",
      message: expect.stringContaining("XCTAssertTrue failed - on sign in"),
    });
    const folder = `device-${UDID}`;
    expect(failure?.artifacts).toEqual([
      `${folder}/screenshots/${TARGET}.LoginTests.testRejects.png`,
      `${folder}/device-log.txt`,
      `${folder}/video/part-01.mp4`,
    ]);
    const png = await readFile(
      join(ctx.artifactsDir, `${folder}/screenshots/${TARGET}.LoginTests.testRejects.png`),
    );
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(await readFile(join(ctx.artifactsDir, `${folder}/device-log.txt`), "utf8")).toContain(
      "form shown",
    );
    // Stopped with SIGINT: the recording is finished (its moov box written), not cut off.
    const video = await readFile(join(ctx.artifactsDir, `${folder}/video/part-01.mp4`));
    expect(video.subarray(4, 8).toString("latin1")).toBe("ftyp");
    expect(video.includes(Buffer.from("moov", "latin1"))).toBe(true);
  });

  it("installs the .app of a zipped app, and clears data by erasing the shut down simulator first", async () => {
    const { lab, ctx, tools } = await setUp(
      {
        simulators: [simulator],
        suites: { [TARGET]: { tests: [{ class: "LoginTests", method: "testSignsIn", outcome: "pass" }] } },
      },
      "zip",
    );
    lab.preinstall(UDID, { bundleId: APP.bundleId, name: "Shop" });
    const outcome = await runXcuitestStep(step({ clear_package_data: true, record_video: "never" }), ctx, {
      tools,
    });
    expect(outcome).toEqual({ status: "passed", message: null });
    expect(lab.simulators()[0]?.erased).toBe(1);
    const calls = lab.calls().map((c) => `${c.tool} ${c.argv.slice(0, 2).join(" ")}`);
    expect(calls.indexOf("xcrun simctl erase")).toBeLessThan(calls.indexOf("xcrun simctl boot"));
    const install = lab.calls().find((c) => c.argv[1] === "install");
    expect(install?.argv.at(-1)).toMatch(/\/app\/Shop\.app$/);
  });

  it("hands the run back when the simulator crashes during the run", async () => {
    const { lab, ctx, tools } = await setUp({
      simulators: [simulator],
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass" },
            { class: "LoginTests", method: "testSignsOut", outcome: "pass" },
          ],
        },
      },
    });
    lab.crash(UDID);
    const outcome = await runXcuitestStep(step({ record_video: "never" }), ctx, { tools });
    expect(outcome).toMatchObject({ status: "errored", deviceLost: true });
    expect(outcome.message).toContain(`device ${UDID} was lost`);
    expect(ctx.cases).toEqual([]);
  });

  it("reruns a flaky test alone and reports each try", async () => {
    const { lab, ctx, tools } = await setUp({
      simulators: [{ ...simulator, state: "Booted" as const }],
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass" },
            { class: "CartTests", method: "testFlaky", outcomes: ["fail", "fail", "pass"] },
          ],
        },
      },
    });
    const outcome = await runXcuitestStep(step({ retry_failed_tests: 3, record_video: "never" }), ctx, {
      tools,
    });
    expect(outcome.status).toBe("passed");
    expect(ctx.cases.filter((c) => c.name === "testFlaky").map((c) => `${c.status} ${c.retry}`)).toEqual([
      "failed 0",
      "failed 1",
      "passed 2",
    ]);
    expect(
      runs(lab)
        .slice(1)
        .map((argv) => argv.filter((a) => a.startsWith("-only-testing:"))),
    ).toEqual([
      [`-only-testing:${TARGET}/CartTests/testFlaky`],
      [`-only-testing:${TARGET}/CartTests/testFlaky`],
    ]);
  });

  it("on Xcode 15 runs without a listing and reads the results from the legacy object graph", async () => {
    const { ctx, tools } = await setUp({
      xcodeVersion: 15,
      simulators: [simulator],
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass" },
            { class: "LoginTests", method: "testRejects", outcome: "fail", message: "XCTAssertEqual failed" },
          ],
        },
      },
    });
    const outcome = await runXcuitestStep(step({ record_video: "never" }), ctx, { tools });
    expect(outcome).toEqual({ status: "failed", message: "1 of 2 test cases failed" });
    expect(ctx.lines("agent").some((l) => l.includes("running without a listing"))).toBe(true);
    expect(ctx.cases.map((c) => `${c.classname}#${c.name} ${c.status}`).sort()).toEqual([
      `${TARGET}.LoginTests#testRejects failed`,
      `${TARGET}.LoginTests#testSignsIn passed`,
    ]);
    const failure = ctx.cases.find((c) => c.status === "failed");
    expect(failure?.message).toContain("XCTAssertEqual failed");
    // No `export attachments` before Xcode 16: the failure names the device log only, and says why in the log.
    expect(failure?.artifacts).toEqual([`device-${UDID}/device-log.txt`]);
    expect(ctx.lines("agent").some((l) => l.startsWith("attachments not exported"))).toBe(true);
  });

  it("installs with devicectl and runs on a physical device, without simulator captures", async () => {
    const device = {
      identifier: "0D6F1F7C-7F6B-4D6E-9D5B-3B2C1A0F9E11",
      udid: "00008110-001A2B3C4D5E6F70",
      name: "Ann's iPhone",
    };
    const { lab, ctx, tools } = await setUp({
      devices: [device],
      suites: { [TARGET]: { tests: [{ class: "LoginTests", method: "testSignsIn", outcome: "pass" }] } },
    });
    const onDevice = {
      ...ctx,
      device: { serial: device.udid, platform: "ios" as const, model: "iPhone 15 Pro", os_version: "18.0" },
    };
    const outcome = await runXcuitestStep(step(), onDevice, { tools });
    expect(outcome, ctx.lines("agent").join("\n")).toEqual({ status: "passed", message: null });
    expect(lab.calls().find((c) => c.argv[0] === "devicectl" && c.argv[1] === "device")?.argv).toEqual([
      "devicectl",
      "device",
      "install",
      "app",
      "--device",
      device.udid,
      expect.stringMatching(/\/Shop\.app$/),
    ]);
    expect(runs(lab)[0]).toContain(`id=${device.udid}`);
    expect(lab.calls().some((c) => c.argv.includes("spawn") || c.argv.includes("recordVideo"))).toBe(false);
    expect(ctx.lines("agent")).toContain("no device log or video on a physical device");
  });

  it("stops xcodebuild and the captures on a cancel, keeping no video and reporting nothing", async () => {
    const { lab, ctx, tools } = await setUp({
      simulators: [simulator],
      suites: {
        [TARGET]: {
          tests: [{ class: "SlowTests", method: "testWaits", outcome: "pass", duration_ms: 600_000 }],
        },
      },
    });
    const running = runXcuitestStep(step({ record_video: "on_failure" }), ctx, { tools });
    await waitFor("xcodebuild to run the tests", async () => runs(lab).length > 0);
    ctx.abort("cancelled by the user");
    expect(await running).toEqual({ status: "cancelled", message: "cancelled by the user" });
    expect(ctx.cases).toEqual([]);
    expect(existsSync(join(ctx.artifactsDir, `device-${UDID}`, "video", "part-01.mp4"))).toBe(false);
  });
});
