/**
 * The instrumentation step, in the order a real device needs it (API.md §5): install the app and the test
 * APK; clear the app's data if asked; list the tests (`-e log true`) so every test is accounted for; start
 * logcat and, if asked, video; run the tests, reporting each as it ends with a screenshot of each failure;
 * stop the captures and keep them as artifacts named on their test cases. A device that goes away on the
 * way is an infrastructure error (the run is handed back), not a test failure.
 */
import type { InstrumentationStep } from "@testbay/client";
import { Adb } from "../android/adb.ts";
import { amInstrumentCommand, type InstrumentationTarget } from "../android/am-instrument.ts";
import { failing, startCaptures, withCaptures } from "../android/device-captures.ts";
import { apkNamed, installApk } from "../android/install-apk.ts";
import { testKey } from "../android/logcat-cut.ts";
import { InstrumentationParser, uniqueTests } from "./instrumentation-parser.ts";
import { abortMessage, testCasesOutcome } from "./outcome.ts";
import { processOutcome, stepTimeoutMs } from "./process-outcome.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";

export const DEFAULT_RUNNER = "androidx.test.runner.AndroidJUnitRunner";

/** A listing or a short adb command that takes longer than this is stuck. */
const shortCommandMs = 120_000;

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
  const testPackage = ctx.testPackage;
  if (testPackage === null) {
    return {
      status: "errored",
      message: `version ${ctx.version} has no test package: upload its test APK (testbay upload --test-file)`,
    };
  }
  const target: InstrumentationTarget = {
    testPackage: step.test_package ?? testPackage.test.package_name,
    runner: step.runner ?? testPackage.test.runner,
  };
  const timeoutMs = stepTimeoutMs(step, ctx);
  const deadline = Date.now() + timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  const adb = new Adb(device.serial, { workDir: ctx.workDir, signal: ctx.signal, log: ctx.log });
  const lost = (message: string): StepOutcome => ({
    status: "errored",
    message: `device ${device.serial} was lost: ${message}`,
    deviceLost: true,
  });

  // 1. Install the app and its tests, from files adb accepts.
  let apks: string[];
  try {
    apks = [
      await apkNamed(await ctx.appPath(), ctx.workDir, ctx.packageName),
      await apkNamed(await ctx.testPackagePath(), ctx.workDir, target.testPackage),
    ];
  } catch (error) {
    return { status: "errored", message: `could not fetch the APKs: ${(error as Error).message}` };
  }
  for (const apk of apks) {
    const installed = await installApk(adb, apk, left());
    if (ctx.signal.aborted) return { status: "cancelled", message: abortMessage(ctx.signal) };
    if (!installed.ok) return installed.deviceLost ? lost(installed.message) : errored(installed.message);
  }
  if (step.clear_package_data) {
    const cleared = await adb.shell(`pm clear ${ctx.packageName}`, shortCommandMs);
    if (!cleared.ok) {
      const why = `pm clear ${ctx.packageName} failed: ${cleared.lines.at(-1) ?? cleared.exitCode}`;
      return cleared.deviceLost || !(await adb.present()) ? lost(why) : errored(why);
    }
  }

  // 2. List the tests without running them: the whole set, so a crash cannot make tests go missing.
  const listing = await adb.shell(
    amInstrumentCommand(step, target, { listOnly: true }),
    Math.min(left(), shortCommandMs),
  );
  if (ctx.signal.aborted) return { status: "cancelled", message: abortMessage(ctx.signal) };
  const listingRun = new InstrumentationParser(() => {});
  for (const line of listing.lines) listingRun.line(line);
  const listingEnd = listingRun.end();
  const listed = uniqueTests(listingRun.seen());
  if (!listingEnd.completed) {
    const why = `listing the tests failed: ${listingEnd.message}`;
    return listing.deviceLost || !(await adb.present()) ? lost(why) : errored(why);
  }
  if (listed.length === 0) return errored("the test package has no tests that match the step's filter");
  ctx.log("agent", `${listed.length} tests listed in ${target.testPackage}`);

  // 3. Captures, then the run.
  const captures = await startCaptures(step, ctx, adb);
  const reported: TestCase[] = [];
  const report = (testCase: TestCase) => {
    reported.push(testCase);
    ctx.testCase(testCase);
  };
  // Each failure's screenshot is taken before its test case is reported, one at a time, in order.
  let reporting: Promise<void> = Promise.resolve();
  let runEnded = false;
  const heldAtEnd: TestCase[] = [];
  const parser = new InstrumentationParser((testCase) => {
    // Tests the parser closes at the end of the output wait until we know whether the device was lost.
    if (runEnded) {
      heldAtEnd.push(testCase);
      return;
    }
    reporting = reporting.then(async () => report(await withCaptures(testCase, captures, adb, ctx)));
  }, Date.now);
  const run = await adb.shell(amInstrumentCommand(step, target), left(), (stream, line) => {
    if (stream === "stdout") parser.line(line);
  });
  runEnded = true;
  const end = parser.end();
  await reporting;
  await captures.stop();

  const ran = processOutcome(run, ctx, timeoutMs, "adb");
  if (ran.status === "cancelled") {
    await captures.collect(false, reported);
    return ran;
  }
  if (!end.completed && !run.timedOut && (run.deviceLost || !(await adb.present()))) {
    // Nothing about the tests that did not finish is known: the run is handed back, nothing reported.
    await captures.collect(false, reported);
    return lost(end.message ?? "adb lost the device during the run");
  }
  for (const testCase of heldAtEnd) report(await withCaptures(testCase, captures, adb, ctx, false));
  const why = run.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : (end.message ?? "it did not run");
  const seen = new Set(reported.map((c) => testKey(c.classname, c.name)));
  for (const test of listed) {
    if (seen.has(testKey(test.classname, test.name))) continue;
    report({
      classname: test.classname,
      name: test.name,
      status: "errored",
      duration_ms: null,
      message: `did not run: ${why}`,
      details: null,
    });
  }
  await captures.collect(reported.some(failing), reported);
  if (run.timedOut) return ran;
  if (!end.completed) {
    return errored(
      end.crashed ? `app crashed: ${end.message}` : (end.message ?? "instrumentation did not complete"),
    );
  }
  return testCasesOutcome(reported);
}

function errored(message: string): StepOutcome {
  return { status: "errored", message };
}
