import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InstrumentationStep } from "@testbay/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDeviceLab, type DeviceLab, type Suite } from "../../test/stand-ins/device-lab.ts";
import { runInstrumentationStep } from "./instrumentation-step.ts";
import { ANDROID_BINARY, makeStepContext, type TestStepContext } from "./test-context.ts";

const binaries = fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url));
const APP = join(binaries, "app-basic.apk");
const TEST_APK = join(binaries, "app-basic-androidTest.apk");
const SERIAL = "emulator-5554";
const TEST_PACKAGE = "com.example.basic.test";
const RUNNER = "androidx.test.runner.AndroidJUnitRunner";
const device = { serial: SERIAL, platform: "android" as const, model: "Pixel 7", os_version: "14" };

const login = "com.example.basic.LoginTest";
const cart = "com.example.basic.CartTest";
const stack = `java.lang.AssertionError: expected:<Welcome> but was:<Sign in>
\tat org.junit.Assert.fail(Assert.java:89)
\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:42)`;

const suite = (overrides: Partial<Suite> = {}): Suite => ({
  tests: [
    { class: login, method: "signsIn", outcome: "pass", duration_ms: 300, logcat: ["D/Login: form shown"] },
    {
      class: login,
      method: "rejectsBadPassword",
      outcome: "fail",
      duration_ms: 300,
      stack,
      logcat: ["W/Login: bad password"],
    },
    { class: cart, method: "addsItem", outcome: "pass", duration_ms: 300 },
    { class: cart, method: "checksOut", outcome: "pass", duration_ms: 300 },
  ],
  ...overrides,
});

let lab: DeviceLab | undefined;
let ctx: TestStepContext | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await ctx?.cleanup();
  lab?.cleanup();
  ctx = undefined;
  lab = undefined;
});

async function setUp(options: { suite?: Suite; sdk?: number; timeScale?: number } = {}) {
  lab = await createDeviceLab({
    devices: [{ serial: SERIAL, model: "Pixel 7", sdk: options.sdk ?? 34 }],
    suites: { [TEST_PACKAGE]: options.suite ?? suite() },
    timeScale: options.timeScale ?? 0.05,
  });
  for (const [name, value] of Object.entries(lab.env)) vi.stubEnv(name, value);
  ctx = await makeStepContext({
    device,
    appPath: async () => APP,
    binary: { ...ANDROID_BINARY, package_name: "com.example.basic" },
    packageName: "com.example.basic",
    testPackage: {
      format: "apk",
      sha256: "0".repeat(64),
      size_bytes: statSync(TEST_APK).size,
      test: { package_name: TEST_PACKAGE, runner: RUNNER, target_package: "com.example.basic" },
    },
    testPackagePath: async () => TEST_APK,
  });
  return { lab, ctx };
}

const step = (extra: Partial<InstrumentationStep> = {}): InstrumentationStep => ({
  type: "instrumentation",
  record_video: "never",
  ...extra,
});

/** The adb commands run on the device, as "install …", "shell am instrument …" and so on. */
const adbCommands = (l: DeviceLab) =>
  l
    .calls()
    .filter((call) => call.tool === "adb")
    .map((call) => (call.argv[0] === "-s" ? call.argv.slice(2) : call.argv).join(" "));

describe("runInstrumentationStep on the stateful adb stand-in", () => {
  it("installs both APKs from .apk files with -r -t -g, lists the tests, then runs them", async () => {
    const { lab, ctx } = await setUp();
    const outcome = await runInstrumentationStep(step(), ctx);
    expect(outcome).toEqual({ status: "failed", message: "1 of 4 test cases failed" });

    const installed = lab.installed(SERIAL);
    expect(installed["com.example.basic"]?.flags).toEqual(["-r", "-t", "-g"]);
    expect(installed[TEST_PACKAGE]).toMatchObject({
      flags: ["-r", "-t", "-g"],
      instrumentation: { targetPackage: "com.example.basic" },
    });
    const commands = adbCommands(lab);
    const installs = commands.filter((c) => c.startsWith("install "));
    expect(installs).toHaveLength(2);
    for (const install of installs) expect(install).toMatch(/\.apk$/);
    const instruments = commands.filter((c) => c.includes("am instrument"));
    expect(instruments).toEqual([
      `shell am instrument -w -r -e 'log' 'true' '${TEST_PACKAGE}/${RUNNER}'`,
      `shell am instrument -w -r '${TEST_PACKAGE}/${RUNNER}'`,
    ]);
    // Installs come before the listing, the listing before logcat starts, logcat before the run.
    const order = (text: string) => commands.findIndex((c) => c.includes(text));
    expect(order("install ")).toBeLessThan(order("'log' 'true'"));
    expect(order("'log' 'true'")).toBeLessThan(order("logcat -c"));
    expect(order("logcat -c")).toBeLessThan(order(`am instrument -w -r '${TEST_PACKAGE}`));

    expect(ctx.cases.map((c) => [c.classname, c.name, c.status])).toEqual([
      [login, "signsIn", "passed"],
      [login, "rejectsBadPassword", "failed"],
      [cart, "addsItem", "passed"],
      [cart, "checksOut", "passed"],
    ]);
    const failure = ctx.cases[1];
    expect(failure?.message).toBe("java.lang.AssertionError: expected:<Welcome> but was:<Sign in>");
    expect(failure?.details).toContain("LoginTest.kt:42");
  });

  it("keeps a PNG screenshot and the logcat cut of a failure, named on its test case", async () => {
    const { ctx } = await setUp();
    await runInstrumentationStep(step(), ctx);
    const failure = ctx.cases.find((c) => c.status === "failed");
    const folder = `device-${SERIAL}`;
    expect(failure?.artifacts).toEqual([
      `${folder}/screenshots/${login}.rejectsBadPassword.png`,
      `${folder}/logcat/${login}.rejectsBadPassword.txt`,
    ]);
    const png = readFileSync(join(ctx.artifactsDir, failure?.artifacts?.[0] ?? ""));
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const cut = readFileSync(join(ctx.artifactsDir, failure?.artifacts?.[1] ?? ""), "utf8");
    expect(cut).toContain(`TestRunner: started: rejectsBadPassword(${login})`);
    expect(cut).toContain("bad password");
    expect(cut).not.toContain("form shown");
    const whole = readFileSync(join(ctx.artifactsDir, folder, "logcat.txt"), "utf8");
    expect(whole).toContain("form shown");
    expect(whole).toContain("bad password");
    // Passing tests carry no artifacts.
    expect(ctx.cases[0]?.artifacts).toBeUndefined();
  });

  it("captures nothing it was told not to", async () => {
    const { lab, ctx } = await setUp();
    await runInstrumentationStep(step({ logcat: false, screenshot_on_failure: false }), ctx);
    expect(ctx.cases.find((c) => c.status === "failed")?.artifacts).toEqual([]);
    expect(adbCommands(lab).some((c) => c.startsWith("logcat") || c.includes("screencap"))).toBe(false);
    expect(readdirSync(ctx.artifactsDir)).toEqual([]);
  });

  it("clears the app's data after installing and before the tests when asked", async () => {
    const { lab, ctx } = await setUp();
    await runInstrumentationStep(step({ clear_package_data: true }), ctx);
    expect(lab.installed(SERIAL)["com.example.basic"]?.dataClears).toBe(1);
    const commands = adbCommands(lab);
    const clear = commands.indexOf("shell pm clear com.example.basic");
    expect(clear).toBeGreaterThan(commands.findLastIndex((c) => c.startsWith("install ")));
    expect(clear).toBeLessThan(commands.findIndex((c) => c.includes("am instrument")));
  });

  it("turns the filter into runner arguments, for the listing and the run", async () => {
    const { lab, ctx } = await setUp();
    const outcome = await runInstrumentationStep(
      step({ filter: { classes: [cart], not_annotations: ["androidx.test.filters.FlakyTest"] } }),
      ctx,
    );
    expect(outcome.status).toBe("passed");
    expect(ctx.cases.map((c) => c.name)).toEqual(["addsItem", "checksOut"]);
    const runs = adbCommands(lab).filter((c) => c.includes("am instrument"));
    for (const run of runs) {
      expect(run).toContain(`-e 'class' '${cart}' -e 'notAnnotation' 'androidx.test.filters.FlakyTest'`);
    }
  });

  it("reports the tests a crash kept from running as errored, none missing", async () => {
    const tests = suite().tests.map((t) =>
      t.method === "addsItem" ? { ...t, outcome: "crash" as const } : t,
    );
    const { ctx } = await setUp({ suite: { tests } });
    const outcome = await runInstrumentationStep(step(), ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toMatch(/^app crashed: /);
    expect(outcome.deviceLost).toBeUndefined();
    expect(ctx.cases.map((c) => [c.name, c.status])).toEqual([
      ["signsIn", "passed"],
      ["rejectsBadPassword", "failed"],
      ["addsItem", "errored"],
      ["checksOut", "errored"],
    ]);
    expect(ctx.cases[3]?.message).toMatch(/^did not run: /);
  });

  it("hands the run back when the device vanishes mid-run, reporting no failure for it", async () => {
    const passing = suite().tests.map((t) => ({ ...t, outcome: "pass" as const }));
    const { ctx } = await setUp({ suite: { tests: passing, vanishAfterTests: 2 } });
    const outcome = await runInstrumentationStep(step(), ctx);
    expect(outcome).toMatchObject({ status: "errored", deviceLost: true });
    expect(outcome.message).toContain(`device ${SERIAL} was lost`);
    expect(ctx.cases.every((c) => c.status === "passed")).toBe(true);
    expect(ctx.cases.length).toBeLessThanOrEqual(2);
  });

  it("errors with the device's reason when an APK cannot be installed, and runs nothing", async () => {
    const { lab, ctx } = await setUp({ sdk: 21 });
    const outcome = await runInstrumentationStep(step(), ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.deviceLost).toBeUndefined();
    expect(outcome.message).toContain("INSTALL_FAILED_OLDER_SDK");
    expect(adbCommands(lab).some((c) => c.includes("am instrument"))).toBe(false);
  });

  it("errors before touching the device when the version has no test package", async () => {
    const { lab, ctx } = await setUp();
    const outcome = await runInstrumentationStep(step(), { ...ctx, testPackage: null });
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toContain("no test package");
    expect(lab.calls()).toEqual([]);
  });

  it("records video in segments past screenrecord's 180 s limit, each a finished MP4, and cleans the device", async () => {
    // 0.01: a 180 s segment lasts 1.8 s; five tests of 100 s each (1 s here) need more than two segments.
    const long = Array.from({ length: 5 }, (_, i) => ({
      class: login,
      method: `journey${i + 1}`,
      outcome: "pass" as const,
      duration_ms: 100_000,
    }));
    const { lab, ctx } = await setUp({ suite: { tests: long }, timeScale: 0.01 });
    const outcome = await runInstrumentationStep(step({ record_video: "always" }), ctx);
    expect(outcome.status).toBe("passed");
    const videoDir = join(ctx.artifactsDir, `device-${SERIAL}`, "video");
    const parts = readdirSync(videoDir).sort();
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) {
      const mp4 = readFileSync(join(videoDir, part));
      expect(mp4.subarray(4, 8).toString("latin1")).toBe("ftyp");
      // The index a player needs is written only when screenrecord stops cleanly (time limit or SIGINT).
      expect(mp4.includes(Buffer.from("moov"))).toBe(true);
    }
    const recordings = Object.keys(lab.files(SERIAL)).filter((f) => f.endsWith(".mp4"));
    expect(recordings).toEqual([]);
    expect(adbCommands(lab)).toContain("shell pkill -INT screenrecord");
  });

  it("keeps no video when every test passed and video is on_failure, but names the segment of a failure", async () => {
    const passing = suite().tests.map((t) => ({ ...t, outcome: "pass" as const }));
    const first = await setUp({ suite: { tests: passing } });
    await runInstrumentationStep(step({ record_video: "on_failure" }), first.ctx);
    expect(existsSync(join(first.ctx.artifactsDir, `device-${SERIAL}`, "video"))).toBe(false);
    expect(Object.keys(first.lab.files(SERIAL)).filter((f) => f.endsWith(".mp4"))).toEqual([]);
    await first.ctx.cleanup();
    first.lab.cleanup();

    const { ctx } = await setUp();
    await runInstrumentationStep(step({ record_video: "on_failure" }), ctx);
    const failure = ctx.cases.find((c) => c.status === "failed");
    const video = failure?.artifacts?.find((name) => name.endsWith(".mp4"));
    expect(video).toBe(`device-${SERIAL}/video/part-01.mp4`);
    expect(existsSync(join(ctx.artifactsDir, video ?? ""))).toBe(true);
  });

  it("is cancelled when the signal aborts mid-run", async () => {
    const slow = suite().tests.map((t) => ({ ...t, duration_ms: 60_000 }));
    const { ctx } = await setUp({ suite: { tests: slow }, timeScale: 1 });
    const running = runInstrumentationStep(step(), ctx);
    await vi.waitFor(() => expect(ctx.lines("stdout").some((l) => l.includes("numtests"))).toBe(true), {
      timeout: 20_000,
      interval: 50,
    });
    ctx.abort("cancelled by the user");
    expect(await running).toMatchObject({ status: "cancelled" });
  });

  it("needs an Android device", async () => {
    const { ctx } = await setUp();
    const outcome = await runInstrumentationStep(step(), { ...ctx, device: null });
    expect(outcome).toEqual({ status: "errored", message: "instrumentation needs an Android device" });
  });
});
