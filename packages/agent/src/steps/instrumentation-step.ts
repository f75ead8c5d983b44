/**
 * The instrumentation step, in the order a real device needs it (API.md §5): install the app and the test
 * APK; clear the app's data if asked; list the tests (`-e log true`) so every test is accounted for; start
 * logcat and, if asked, video; run the tests, reporting each as it ends with a screenshot of each failure;
 * with retry_failed_tests, run each failed test again alone (retry-failed-tests.ts); stop the captures and keep
 * them as artifacts named on their test cases. A device that goes away on the way is an infrastructure error
 * (the run is handed back), not a test failure.
 */
import type { InstrumentationStep } from "@testbay/client";
import { Adb } from "../android/adb.ts";
import { amInstrumentCommand, type InstrumentationTarget } from "../android/am-instrument.ts";
import { type Captures, failing, startCaptures, withCaptures } from "../android/device-captures.ts";
import { apkNamed, installApk } from "../android/install-apk.ts";
import { testKey } from "../android/logcat-cut.ts";
import {
  InstrumentationParser,
  type InstrumentationRunResult,
  uniqueTests,
} from "./instrumentation-parser.ts";
import { abortMessage, testCasesOutcome } from "./outcome.ts";
import { processOutcome, stepTimeoutMs } from "./process-outcome.ts";
import { lastTries, type Rerun, retryFailedTests } from "./retry-failed-tests.ts";
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

  // 3. Captures, then the run, then each failed test again alone when the plan asks for it (all under the
  // same captures: one log and one video for the step, with each try's part named on its test case).
  const captures = await startCaptures(step, ctx, adb);
  const retries = step.retry_failed_tests ?? 0;
  const reported: TestCase[] = [];
  const neverStarted = new Set<TestCase>();
  const report = (testCase: TestCase, started = true) => {
    reported.push(testCase);
    if (!started) neverStarted.add(testCase);
    ctx.testCase(testCase);
  };
  const runTests = (command: string, retry: number, only: string | null) =>
    runAndReport({
      adb,
      ctx,
      captures,
      command,
      retry: retries > 0 ? retry : undefined,
      only,
      report,
      left,
      timeoutMs,
    });
  const stopWith = async (outcome: StepOutcome) => {
    await captures.stop();
    await captures.collect(false, reported, true, neverStarted);
    return outcome;
  };

  const first = await runTests(amInstrumentCommand(step, target), 0, null);
  // A cancelled run, or one whose device went: nothing about the tests that did not finish is known, and the
  // run is handed back (device lost) without a failure reported for it.
  if ("stop" in first) return stopWith(first.stop);
  for (const test of listed) {
    if (first.seen.has(testKey(test.classname, test.name))) continue;
    report(
      {
        classname: test.classname,
        name: test.name,
        status: "errored",
        duration_ms: null,
        message: `did not run: ${first.why}`,
        details: null,
        ...(retries > 0 ? { retry: 0 } : {}),
      },
      false,
    );
  }

  let final: TestCase[] = [...reported];
  if (retries > 0 && !first.run.timedOut) {
    const done = await retryFailedTests([...reported], retries, async (test, retry): Promise<Rerun> => {
      if (ctx.signal.aborted) return { stop: { status: "cancelled", message: abortMessage(ctx.signal) } };
      const key = testKey(test.classname, test.name);
      ctx.log("agent", `running ${key} again alone (retry ${retry} of ${retries})`);
      const rerun = await runTests(amInstrumentCommand(step, target, { only: test }), retry, key);
      if ("stop" in rerun) return rerun;
      let tried = reported.findLast((c) => testKey(c.classname, c.name) === key && c.retry === retry);
      if (!tried) {
        tried = {
          ...test,
          status: "errored",
          duration_ms: null,
          message: `did not run: ${rerun.end.completed ? "the runner did not run it alone" : rerun.why}`,
          details: null,
          retry,
        };
        report(tried, false);
      }
      // Out of time: this try is reported, and there is no time for another.
      return rerun.run.timedOut ? { stop: rerun.ran } : { tried };
    });
    if (done.stopped?.deviceLost || done.stopped?.status === "cancelled") return stopWith(done.stopped);
    final = done.final;
    if (done.reruns > 0) {
      const flaky = final.filter((c) => c.status === "passed" && c.retry !== undefined && c.retry > 0);
      ctx.log("agent", `${done.reruns} reruns; ${flaky.length} tests passed on a rerun (flaky)`);
    }
    if (done.stopped) {
      await captures.stop();
      await captures.collect(true, reported, true, neverStarted);
      return done.stopped;
    }
  }
  await captures.stop();
  await captures.collect(reported.some(failing), reported, true, neverStarted);
  if (first.run.timedOut) return first.ran;
  // A crash that kept tests from running errors the step, unless their reruns all passed.
  if (!first.end.completed && (retries === 0 || final.some(failing))) {
    return errored(
      first.end.crashed
        ? `app crashed: ${first.end.message}`
        : (first.end.message ?? "instrumentation did not complete"),
    );
  }
  return testCasesOutcome(retries > 0 ? [...lastTries(final).values()] : reported);
}

interface RunAndReport {
  adb: Adb;
  ctx: StepContext;
  captures: Captures;
  command: string;
  /** The try's number on every test case it reports; undefined when the step makes no retries. */
  retry: number | undefined;
  /** The one test (testKey) a rerun is for; null: every test the run reports. */
  only: string | null;
  report(testCase: TestCase, started?: boolean): void;
  left(): number;
  timeoutMs: number;
}

type Ran =
  | { stop: StepOutcome }
  | {
      run: Awaited<ReturnType<Adb["shell"]>>;
      end: InstrumentationRunResult;
      ran: StepOutcome;
      /** Tests (testKey) the runner reported. */
      seen: Set<string>;
      /** Why tests it did not report did not run. */
      why: string;
    };

/**
 * One `am instrument` run: each test case reported as it ends, a failure with its screenshot; the tests the
 * parser closes at the end of the output wait until we know whether the device was lost.
 */
async function runAndReport(options: RunAndReport): Promise<Ran> {
  const { adb, ctx, captures, retry, only, report } = options;
  const seen = new Set<string>();
  // Each failure's screenshot is taken before its test case is reported, one at a time, in order.
  let reporting: Promise<void> = Promise.resolve();
  let runEnded = false;
  const heldAtEnd: TestCase[] = [];
  const parser = new InstrumentationParser((parsed) => {
    const key = testKey(parsed.classname, parsed.name);
    // A rerun of one index of a parameterized method runs every index (see singleTestSpec): only its own counts.
    if (only !== null && key !== only) return;
    seen.add(key);
    const testCase = retry === undefined ? parsed : { ...parsed, retry };
    if (runEnded) {
      heldAtEnd.push(testCase);
      return;
    }
    reporting = reporting.then(async () => report(await withCaptures(testCase, captures, adb, ctx)));
  }, Date.now);
  const run = await adb.shell(options.command, options.left(), (stream, line) => {
    if (stream === "stdout") parser.line(line);
  });
  runEnded = true;
  const end = parser.end();
  await reporting;

  const ran = processOutcome(run, ctx, options.timeoutMs, "adb");
  if (ran.status === "cancelled") return { stop: ran };
  if (!end.completed && !run.timedOut && (run.deviceLost || !(await adb.present()))) {
    return {
      stop: {
        status: "errored",
        message: `device ${adb.serial} was lost: ${end.message ?? "adb lost the device during the run"}`,
        deviceLost: true,
      },
    };
  }
  for (const testCase of heldAtEnd) report(await withCaptures(testCase, captures, adb, ctx, false));
  const why = run.timedOut
    ? `timed out after ${Math.round(options.timeoutMs / 1000)} s`
    : (end.message ?? "it did not run");
  return { run, end, ran, seen, why };
}

function errored(message: string): StepOutcome {
  return { status: "errored", message };
}
