// The agent's own cost of a device run: the instrumentation step as the agent runs it (installs, listing,
// logcat, video, screenshots of failures, collecting the captures) against the time the device itself
// spends running the same tests (`am instrument` alone), both on the stateful adb stand-in.
import { statSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import type { InstrumentationStep } from "@testbay/client";
import { runInstrumentationStep } from "../packages/agent/src/steps/instrumentation-step.ts";
import { ANDROID_BINARY, makeStepContext } from "../packages/agent/src/steps/test-context.ts";
import { createDeviceLab, type SuiteTest } from "../packages/agent/test/stand-ins/device-lab.ts";
import { run as runTool } from "../packages/agent/test/stand-ins/run.ts";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { repoRoot } from "./lib/paths.ts";
import { median } from "./lib/stats.ts";
import { type BenchResult, type RunOptions, ratio, type Target } from "./lib/types.ts";

export const name = "device-run";
export const description =
  "an instrumentation run through the agent (installs, listing, captures) against the device's own run time, on the adb stand-in";

const target: Target = { op: "<=", value: 1.1 };
const plans = {
  // The target's case: 200 tests of 1 s each, at the stand-in's real speed.
  full: { tests: 200, testMs: 1000, failures: 2, rounds: 1 },
  quick: { tests: 20, testMs: 100, failures: 1, rounds: 2 },
};

const binaries = path.join(repoRoot, "packages/server/test/fixtures/binaries");
const serial = "emulator-5554";
const testPackage = "com.example.basic.test";
const runner = "androidx.test.runner.AndroidJUnitRunner";

function suite(count: number, testMs: number, failures: number): SuiteTest[] {
  // Failures spread through the run, so screenshots and logcat cuts happen mid-run as they would.
  const failing = new Set(
    Array.from({ length: failures }, (_, i) => Math.floor(((i + 1) * count) / (failures + 1))),
  );
  return Array.from({ length: count }, (_, i) => ({
    class: `com.example.basic.Suite${Math.floor(i / 20)}Test`,
    method: `case${i}`,
    outcome: failing.has(i) ? ("fail" as const) : ("pass" as const),
    duration_ms: testMs,
    logcat: [`D/Basic: case ${i} working`],
  }));
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const scope = new CleanupScope();
  try {
    const lab = await createDeviceLab({
      devices: [{ serial, model: "Pixel 7", sdk: 34 }],
      suites: { [testPackage]: { tests: suite(plan.tests, plan.testMs, plan.failures) } },
      timeScale: 1,
    });
    scope.defer(() => lab.cleanup());
    const previous = {
      PATH: process.env.PATH,
      FAKE_ADB_STATE: process.env.FAKE_ADB_STATE,
      FAKE_ADB_TIME_SCALE: process.env.FAKE_ADB_TIME_SCALE,
    };
    Object.assign(process.env, lab.env);
    scope.defer(() => {
      for (const [key, value] of Object.entries(previous)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    });

    const agentMs: number[] = [];
    const deviceMs: number[] = [];
    const phases: Array<Record<string, number>> = [];
    for (let round = 1; round <= plan.rounds; round++) {
      log(`round ${round}/${plan.rounds}: ${plan.tests} tests of ${plan.testMs} ms through the agent's step`);
      const ctx = await makeStepContext({
        device: { serial, platform: "android", model: "Pixel 7", os_version: "14" },
        appPath: async () => path.join(binaries, "app-basic.apk"),
        binary: { ...ANDROID_BINARY, package_name: "com.example.basic" },
        packageName: "com.example.basic",
        testPackage: {
          format: "apk",
          sha256: "0".repeat(64),
          size_bytes: statSync(path.join(binaries, "app-basic-androidTest.apk")).size,
          test: { package_name: testPackage, runner, target_package: "com.example.basic" },
        },
        testPackagePath: async () => path.join(binaries, "app-basic-androidTest.apk"),
        timeoutMs: 3_600_000,
      });
      scope.defer(() => ctx.cleanup());
      const callsBefore = lab.calls().length;
      const step: InstrumentationStep = { type: "instrumentation", record_video: "on_failure" };
      const began = performance.now();
      const outcome = await runInstrumentationStep(step, ctx);
      agentMs.push(performance.now() - began);
      if (ctx.cases.length !== plan.tests || outcome.status !== "failed") {
        throw new Error(
          `the step reported ${ctx.cases.length} tests (${outcome.status}: ${outcome.message})`,
        );
      }
      phases.push(phaseTimes(lab.calls().slice(callsBefore)));
      await rm(ctx.root, { recursive: true, force: true });

      log(`round ${round}/${plan.rounds}: the same tests with am instrument alone`);
      const bare = performance.now();
      const ran = await runTool(lab, "adb", [
        "-s",
        serial,
        "shell",
        "am",
        "instrument",
        "-w",
        "-r",
        `${testPackage}/${runner}`,
      ]);
      deviceMs.push(performance.now() - bare);
      if (!ran.stdout.includes("INSTRUMENTATION_CODE: -1")) throw new Error("the bare run did not complete");
    }

    const agent = median(agentMs);
    const device = median(deviceMs);
    const perRound = agentMs.map((ms, i) => ms / (deviceMs[i] as number));
    const overheadMs = agent - device;
    const phase = phases[0] ?? {};
    return benchResult(quick, startedAt, {
      name,
      description,
      environment: { tests: plan.tests, test_ms: plan.testMs, failures: plan.failures, rounds: plan.rounds },
      rows: [
        {
          label: "agent: the whole instrumentation step",
          metrics: [
            { label: "wall", value: agent / 1000, unit: "s", decimals: 2 },
            { label: "overhead per run", value: overheadMs / 1000, unit: "s", decimals: 2 },
            { label: "overhead per test", value: overheadMs / plan.tests, unit: "ms", decimals: 1 },
          ],
          detail: agentMs.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(", "),
        },
        {
          label: "device: am instrument alone (baseline)",
          metrics: [{ label: "wall", value: device / 1000, unit: "s", decimals: 2 }],
          detail: deviceMs.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(", "),
        },
      ],
      detailLabel: "rounds",
      sections: [
        {
          title: "Where the agent's time went (first round, from the stand-in's call log)",
          rows: Object.entries(phase).map(([label, ms]) => ({
            label,
            metrics: [{ label: "time", value: ms / 1000, unit: "s", decimals: 2 }],
          })),
        },
      ],
      ratios: [ratio("agent step ÷ device run", agent / device, target, perRound)],
      notes: [
        `${plan.tests} tests of ${plan.testMs} ms, ${plan.failures} failing (screenshot, logcat cut and video kept for each), logcat on, video on_failure, on one stand-in device at time scale 1.`,
        "Both sides run the stand-in adb, whose every call starts a Node.js process (~0.1 s): the agent's extra calls (2 installs, listing, logcat, screenrecord, pkill, screencap per failure, pull, rm) cost it that much each, a real adb client far less.",
        "The step's own work is measured in this process; sending events to the server happens in the job runner beside it and is not in these numbers (the claim and trigger benchmarks measure the server).",
      ],
      details: { agentMs, deviceMs, phases },
    });
  } finally {
    await scope.close();
  }
}

/** From the adb calls of one step: install, listing and run times by when each call started. */
function phaseTimes(calls: ReadonlyArray<{ argv: string[]; at: number }>): Record<string, number> {
  const at = (test: (argv: string) => boolean) => calls.find((c) => test(c.argv.join(" ")))?.at;
  const first = calls[0]?.at ?? 0;
  const listing = at((a) => a.includes("'log' 'true'"));
  const logcat = at((a) => a.includes("logcat -c"));
  const runStart = at((a) => a.includes("am instrument") && !a.includes("'log'"));
  const stop = at((a) => a.includes("pkill"));
  const last = calls.at(-1)?.at ?? first;
  const span = (from: number | undefined, to: number | undefined) =>
    from === undefined || to === undefined ? Number.NaN : to - from;
  return {
    "installs (app + test APK)": span(first, listing),
    "listing (-e log true)": span(listing, logcat),
    "captures start (logcat -c, follow, screenrecord)": span(logcat, runStart),
    "the run, with screenshots of failures": span(runStart, stop),
    "captures stop and collect (pull, rm)": span(stop, last),
  };
}
