/**
 * The instrumentation step: installs the app on the Android device, runs `am instrument -w -r` for the
 * plan's test package and reports each test case as its end status streams in. A failed test fails the
 * step; a crash or a run that never reached its end errors it.
 */
import type { InstrumentationStep } from "@testbay/client";
import { installApk } from "./adb-install.ts";
import { InstrumentationParser } from "./instrumentation-parser.ts";
import { abortMessage, testCasesOutcome } from "./outcome.ts";
import { processOutcome, stepTimeoutMs } from "./process-outcome.ts";
import { runProcess } from "./process-runner.ts";
import { shellQuote } from "./shell-quote.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";

export const DEFAULT_RUNNER = "androidx.test.runner.AndroidJUnitRunner";

export async function runInstrumentationStep(
  step: InstrumentationStep,
  ctx: StepContext,
): Promise<StepOutcome> {
  if (ctx.signal.aborted) return { status: "cancelled", message: abortMessage(ctx.signal) };
  const device = ctx.device;
  if (device === null || device.platform !== "android") {
    return { status: "errored", message: "instrumentation needs an Android device" };
  }
  if (ctx.binary.format !== "apk") {
    return {
      status: "errored",
      message: `instrumentation installs an .apk; this binary is an .${ctx.binary.format}`,
    };
  }
  let apk: string;
  try {
    apk = await ctx.appPath();
  } catch (error) {
    return { status: "errored", message: `could not fetch the binary: ${(error as Error).message}` };
  }

  // Install and test run share the step's time limit.
  const timeoutMs = stepTimeoutMs(step, ctx);
  const deadline = Date.now() + timeoutMs;
  const installed = await installApk(device.serial, apk, ctx, timeoutMs);
  if (installed.status !== "passed") return installed;

  const cases: TestCase[] = [];
  const parser = new InstrumentationParser((testCase) => {
    cases.push(testCase);
    ctx.testCase(testCase);
  }, Date.now);
  const result = await runProcess({
    command: "adb",
    args: ["-s", device.serial, "shell", amInstrumentCommand(step)],
    cwd: ctx.workDir,
    env: process.env,
    timeoutMs: Math.max(1, deadline - Date.now()),
    signal: ctx.signal,
    onLine: (stream, line) => {
      ctx.log(stream, line);
      if (stream === "stdout") parser.line(line);
    },
  });
  const run = parser.end();
  const ran = processOutcome(result, ctx, timeoutMs, "adb");
  if (ran.status === "cancelled" || result.timedOut || result.spawnError !== null) return ran;
  if (!run.completed) {
    const why = run.message ?? "instrumentation did not complete";
    return { status: "errored", message: run.crashed ? `app crashed: ${why}` : why };
  }
  return testCasesOutcome(cases);
}

/** The device-side command line; every value from the plan is quoted for the device's shell. */
export function amInstrumentCommand(step: InstrumentationStep): string {
  const words = ["am", "instrument", "-w", "-r"];
  for (const [key, value] of Object.entries(step.args ?? {}))
    words.push("-e", shellQuote(key), shellQuote(value));
  words.push(shellQuote(`${step.test_package}/${step.runner ?? DEFAULT_RUNNER}`));
  return words.join(" ");
}
