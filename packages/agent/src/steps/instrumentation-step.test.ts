import { afterEach, describe, expect, it, vi } from "vitest";
import { useFakeTools } from "./fake-tools.ts";
import { amInstrumentCommand, runInstrumentationStep } from "./instrumentation-step.ts";
import type { Device } from "./step-types.ts";
import { makeStepContext, type TestStepContext } from "./test-context.ts";

const EMULATOR: Device = {
  serial: "emulator-5554",
  platform: "android",
  model: "sdk_gphone64_x86_64",
  os_version: "14",
};
const STEP = { type: "instrumentation" as const, test_package: "com.example.shop.test" };

let ctx: TestStepContext;
afterEach(async () => {
  vi.unstubAllEnvs();
  await ctx.cleanup();
});

async function setUp(scenario: string) {
  ctx = await makeStepContext({ device: EMULATOR });
  return useFakeTools(ctx.root, { FAKE_ADB_SCENARIO: scenario });
}

describe("runInstrumentationStep", () => {
  it("installs the app, runs am instrument and passes when every test passes", async () => {
    const calls = await setUp("passing");
    expect(await runInstrumentationStep(STEP, ctx)).toEqual({ status: "passed", message: null });
    expect(calls().map((c) => c.argv)).toEqual([
      ["-s", "emulator-5554", "install", "-r", await ctx.appPath()],
      [
        "-s",
        "emulator-5554",
        "shell",
        "am instrument -w -r 'com.example.shop.test/androidx.test.runner.AndroidJUnitRunner'",
      ],
    ]);
    expect(ctx.cases.map((c) => `${c.name} ${c.status}`)).toEqual([
      "addsItemToCart passed",
      "removesItemFromCart passed",
      "showsOrderTotal passed",
    ]);
    expect(ctx.lines("stdout")).toContain("Success");
  });

  it("passes the runner and quoted -e arguments to the device shell", async () => {
    const calls = await setUp("passing");
    const step = {
      ...STEP,
      runner: "com.example.shop.ShopRunner",
      args: { class: "com.example.shop.CartTest", note: "it's $HOME" },
    };
    await runInstrumentationStep(step, ctx);
    expect(calls()[1]?.argv[3]).toBe(
      `am instrument -w -r -e 'class' 'com.example.shop.CartTest' -e 'note' 'it'\\''s $HOME' 'com.example.shop.test/com.example.shop.ShopRunner'`,
    );
  });

  it("fails when a test fails, reporting its assertion", async () => {
    await setUp("failing");
    expect(await runInstrumentationStep(STEP, ctx)).toEqual({
      status: "failed",
      message: "1 of 3 test cases failed",
    });
    expect(ctx.cases[1]).toMatchObject({
      classname: "com.example.shop.CartTest",
      name: "removesItemFromCart",
      status: "failed",
      message: "java.lang.AssertionError: expected:<2> but was:<3>",
    });
    expect(ctx.cases[1]?.duration_ms).toEqual(expect.any(Number));
  });

  it("errors when the app crashes mid-run", async () => {
    await setUp("crashing");
    expect(await runInstrumentationStep(STEP, ctx)).toEqual({
      status: "errored",
      message: "app crashed: Process crashed.",
    });
    expect(ctx.cases.map((c) => c.status)).toEqual(["passed", "errored"]);
  });

  it("passes with ignored tests and assumption failures reported as skipped", async () => {
    await setUp("ignored");
    expect(await runInstrumentationStep(STEP, ctx)).toMatchObject({ status: "passed" });
    expect(ctx.cases.map((c) => c.status)).toEqual(["passed", "skipped", "skipped"]);
  });

  it("errors with the device's reason when the test runner is not installed", async () => {
    await setUp("missing-runner");
    const outcome = await runInstrumentationStep(STEP, ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toMatch(
      /^Unable to find instrumentation info for: ComponentInfo\{com\.example\.shop\.test/,
    );
  });

  it("errors with adb's message when the install fails, and runs no test", async () => {
    const calls = await setUp("install-failed");
    expect(await runInstrumentationStep(STEP, ctx)).toEqual({
      status: "errored",
      message:
        "adb install failed: Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package com.example.shop signatures do not match newer version; ignoring!]",
    });
    expect(calls()).toHaveLength(1);
  });

  it("is cancelled when the signal aborts mid-run", async () => {
    await setUp("hang");
    // Cancel once the second test has started (the fake never finishes it).
    const log = ctx.log;
    ctx.log = (stream, line) => {
      log(stream, line);
      if (ctx.lines("stdout").filter((l) => l === "INSTRUMENTATION_STATUS_CODE: 1").length === 2) ctx.abort();
    };
    expect(await runInstrumentationStep(STEP, ctx)).toMatchObject({ status: "cancelled" });
    expect(ctx.cases.map((c) => `${c.name} ${c.status}`)).toEqual([
      "addsItemToCart passed",
      "removesItemFromCart errored",
    ]);
  });

  it("errors on timeout", async () => {
    await setUp("hang");
    ctx.timeoutMs = 1_000;
    expect(await runInstrumentationStep(STEP, ctx)).toEqual({
      status: "errored",
      message: "timed out after 1 s",
      exit_code: null,
    });
  });

  it("needs an Android device", async () => {
    ctx = await makeStepContext();
    expect(await runInstrumentationStep(STEP, ctx)).toEqual({
      status: "errored",
      message: "instrumentation needs an Android device",
    });
  });
});

describe("amInstrumentCommand", () => {
  it("uses AndroidJUnitRunner by default", () => {
    expect(amInstrumentCommand(STEP)).toBe(
      "am instrument -w -r 'com.example.shop.test/androidx.test.runner.AndroidJUnitRunner'",
    );
  });
});
