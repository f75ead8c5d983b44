// retry_failed_tests in the instrumentation step, on the stateful adb stand-in: tests with `outcomes` fail
// on one run and pass on the next, as a flaky test does on a real device.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InstrumentationStep } from "@testbay/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createDeviceLab,
  type DeviceLab,
  type Outcome,
  type SuiteTest,
} from "../../test/stand-ins/device-lab.ts";
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
const folder = `device-${SERIAL}`;

let lab: DeviceLab | undefined;
let ctx: TestStepContext | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await ctx?.cleanup();
  lab?.cleanup();
  ctx = undefined;
  lab = undefined;
});

async function setUp(tests: SuiteTest[]) {
  lab = await createDeviceLab({
    devices: [{ serial: SERIAL, model: "Pixel 7" }],
    suites: { [TEST_PACKAGE]: { tests } },
    timeScale: 0.05,
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

const step = (retries: number): InstrumentationStep => ({
  type: "instrumentation",
  record_video: "never",
  retry_failed_tests: retries,
});

const test = (method: string, outcomes: Outcome[], logcat?: string): SuiteTest => ({
  class: login,
  method,
  outcomes,
  duration_ms: 100,
  logcat: logcat === undefined ? undefined : [`W/Login: ${logcat}`],
});

const reruns = (l: DeviceLab) =>
  l
    .calls()
    .map((call) => call.argv.join(" "))
    .filter((argv) => argv.includes("am instrument") && argv.includes("'class'"));

describe("retry_failed_tests in the instrumentation step", () => {
  it("reruns a failed test alone until it passes; the step passes and both tries keep their captures", async () => {
    const { lab, ctx } = await setUp([
      test("signsIn", ["pass"]),
      test("rejectsBadPassword", ["fail", "pass"], "bad password"),
    ]);
    const outcome = await runInstrumentationStep(step(2), ctx);
    expect(outcome).toEqual({ status: "passed", message: null });
    expect(reruns(lab)).toEqual([
      `-s ${SERIAL} shell am instrument -w -r -e 'class' '${login}#rejectsBadPassword' '${TEST_PACKAGE}/${RUNNER}'`,
    ]);
    expect(ctx.cases.map((c) => [c.name, c.status, c.retry])).toEqual([
      ["signsIn", "passed", 0],
      ["rejectsBadPassword", "failed", 0],
      ["rejectsBadPassword", "passed", 1],
    ]);
    expect(lab.testRuns(SERIAL)).toEqual({ [`${login}#signsIn`]: 1, [`${login}#rejectsBadPassword`]: 2 });
    const failed = ctx.cases[1];
    expect(failed?.artifacts).toEqual([
      `${folder}/screenshots/${login}.rejectsBadPassword.png`,
      `${folder}/logcat/${login}.rejectsBadPassword.txt`,
    ]);
    const cut = readFileSync(join(ctx.artifactsDir, failed?.artifacts?.[1] ?? ""), "utf8");
    expect(cut.match(/TestRunner: started: rejectsBadPassword/g)).toHaveLength(1);
    expect(cut).toContain("TestRunner: failed: rejectsBadPassword");
    // The whole log holds both runs.
    const whole = readFileSync(join(ctx.artifactsDir, folder, "logcat.txt"), "utf8");
    expect(whole.match(/TestRunner: started: rejectsBadPassword/g)).toHaveLength(2);
  });

  it("gives a test that fails every time N reruns, each with captures of its own, and fails the step", async () => {
    const { lab, ctx } = await setUp([
      test("signsIn", ["pass"]),
      test("rejectsBadPassword", ["fail", "error", "fail"], "bad password"),
    ]);
    const outcome = await runInstrumentationStep(step(2), ctx);
    expect(outcome).toEqual({ status: "failed", message: "1 of 2 test cases failed" });
    expect(reruns(lab)).toHaveLength(2);
    const tries = ctx.cases.filter((c) => c.name === "rejectsBadPassword");
    expect(tries.map((c) => [c.status, c.retry])).toEqual([
      ["failed", 0],
      ["failed", 1],
      ["failed", 2],
    ]);
    expect(tries[1]?.details).toContain("java.lang.IllegalStateException: unexpected state");
    const names = tries.flatMap((c) => c.artifacts ?? []);
    expect(new Set(names).size).toBe(6);
    expect(names).toContain(`${folder}/screenshots/${login}.rejectsBadPassword.retry-2.png`);
    // Each try's logcat cut is its own run: the second one holds the IllegalStateException, the others not.
    const cuts = tries.map((c) =>
      readFileSync(join(ctx.artifactsDir, c.artifacts?.find((a) => a.endsWith(".txt")) ?? ""), "utf8"),
    );
    for (const cut of cuts) expect(cut.match(/TestRunner: started: rejectsBadPassword/g)).toHaveLength(1);
    expect(cuts.map((cut) => cut.includes("IllegalStateException"))).toEqual([false, true, false]);
  });

  it("reruns the tests a crash kept from running, each alone; all passing, the step passes", async () => {
    const { lab, ctx } = await setUp([
      test("signsIn", ["pass"]),
      test("crashes", ["crash", "pass"]),
      test("neverReached", ["pass"]),
    ]);
    const outcome = await runInstrumentationStep(step(1), ctx);
    expect(outcome).toEqual({ status: "passed", message: null });
    expect(reruns(lab).map((argv) => /#(\w+)/.exec(argv)?.[1])).toEqual(["crashes", "neverReached"]);
    expect(ctx.cases.map((c) => [c.name, c.status, c.retry])).toEqual([
      ["signsIn", "passed", 0],
      ["crashes", "errored", 0],
      ["neverReached", "errored", 0],
      ["crashes", "passed", 1],
      ["neverReached", "passed", 1],
    ]);
    expect(ctx.cases[2]?.message).toMatch(/^did not run: /);
  });

  it("errors the step as before when a crash's tests still fail on their reruns", async () => {
    const { ctx } = await setUp([test("crashes", ["crash"]), test("neverReached", ["pass"])]);
    const outcome = await runInstrumentationStep(step(1), ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toMatch(/^app crashed: /);
    expect(ctx.cases.map((c) => [c.name, c.status, c.retry])).toEqual([
      ["crashes", "errored", 0],
      ["neverReached", "errored", 0],
      ["crashes", "errored", 1],
      ["neverReached", "passed", 1],
    ]);
  });

  it("hands the run back when the device goes during a rerun", async () => {
    const { lab, ctx } = await setUp([
      test("signsIn", ["pass"]),
      { ...test("rejectsBadPassword", ["fail", "pass"]), duration_ms: 100_000 },
    ]);
    const running = runInstrumentationStep(step(3), ctx);
    await vi.waitUntil(() => reruns(lab).length > 0, { timeout: 30_000, interval: 20 });
    lab.unplug(SERIAL);
    const outcome = await running;
    expect(outcome).toMatchObject({ status: "errored", deviceLost: true });
    expect(outcome.message).toContain(`device ${SERIAL} was lost`);
    expect(ctx.cases.map((c) => [c.name, c.status, c.retry])).toEqual([
      ["signsIn", "passed", 0],
      ["rejectsBadPassword", "failed", 0],
    ]);
  });
});
