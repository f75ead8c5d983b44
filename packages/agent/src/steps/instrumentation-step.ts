/**
 * The instrumentation step, in the order a real device needs it (API.md §5): install the app and the test
 * APK; clear the app's data if asked; list the tests (`-e log true`) so every test is accounted for; start
 * logcat and, if asked, video; run the tests, reporting each as it ends with a screenshot of each failure;
 * with retry_failed_tests, run each failed test again alone (retry-failed-tests.ts); stop the captures and keep
 * them as artifacts named on their test cases. A sharded step (shard-batches.ts) runs the batches of tests the
 * server hands it, each pushed as a testFile, instead of its whole listing. A device that goes away on the way
 * is an infrastructure error (the run is handed back), not a test failure.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { InstrumentationStep } from "@testbay/client";
import { Adb } from "../android/adb.ts";
import {
  amInstrumentCommand,
  type InstrumentationTarget,
  testFileContents,
} from "../android/am-instrument.ts";
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
import { lastTries, type Rerun, retryFailedTests, type TestRef } from "./retry-failed-tests.ts";
import { type BatchRan, runShardBatches, takesBatches } from "./shard-batches.ts";
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
  if (testPackage === null || testPackage.format !== "apk") {
    return {
      status: "errored",
      message: `version ${ctx.version} has no test package that is an APK: upload its test APK (testbay upload --test-file)`,
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
  // same captures: one log and one video for the step, with each try's part named on its test case). A sharded
  // step runs batch after batch of the tests the server hands it instead of its whole listing.
  const captures = await startCaptures(step, ctx, adb);
  const retries = step.retry_failed_tests ?? 0;
  const reported: TestCase[] = [];
  const neverStarted = new Set<TestCase>();
  const report = (testCase: TestCase, started = true) => {
    reported.push(testCase);
    if (!started) neverStarted.add(testCase);
    ctx.testCase(testCase);
  };
  const runTests = (command: string, retry: number, only: ReadonlySet<string> | null) =>
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

  /**
   * One run of `command`, meant to run `expected` (only those are reported when `only` is set), then each
   * failed test again alone. Whatever of `expected` did not run is reported errored, so nothing goes missing.
   */
  const runList = async (
    command: string,
    expected: readonly TestRef[],
    only: ReadonlySet<string> | null,
  ): Promise<ListRan> => {
    const from = reported.length;
    const first = await runTests(command, 0, only);
    // A cancelled run, or one whose device went: nothing about the tests that did not finish is known, and the
    // run is handed back (device lost) without a failure reported for it.
    if ("stop" in first) return { stop: first.stop };
    for (const test of expected) {
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
    let final = reported.slice(from);
    let end: StepOutcome | null = first.run.timedOut ? first.ran : null;
    if (retries > 0 && !first.run.timedOut) {
      const done = await retryFailedTests(final, retries, async (test, retry): Promise<Rerun> => {
        if (ctx.signal.aborted) return { stop: { status: "cancelled", message: abortMessage(ctx.signal) } };
        const key = testKey(test.classname, test.name);
        ctx.log("agent", `running ${key} again alone (retry ${retry} of ${retries})`);
        const rerun = await runTests(
          amInstrumentCommand(step, target, { only: test }),
          retry,
          new Set([key]),
        );
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
      if (done.stopped?.deviceLost || done.stopped?.status === "cancelled") return { stop: done.stopped };
      final = done.final;
      if (done.reruns > 0) {
        const flaky = final.filter((c) => c.status === "passed" && c.retry !== undefined && c.retry > 0);
        ctx.log("agent", `${done.reruns} reruns; ${flaky.length} tests passed on a rerun (flaky)`);
      }
      end = done.stopped;
    }
    // A crash that kept tests from running errors the step, unless their reruns all passed.
    const crashed =
      !first.run.timedOut && !first.end.completed && (retries === 0 || final.some(failing))
        ? first.end.crashed
          ? `app crashed: ${first.end.message}`
          : (first.end.message ?? "instrumentation did not complete")
        : null;
    return { final, end, crashed };
  };

  /** The step's outcome from every list run: out of time first, then a crash, then the tests' statuses. */
  const finish = async (runs: ReadonlyArray<Extract<ListRan, { final: TestCase[] }>>) => {
    const end = runs.find((r) => r.end !== null)?.end ?? null;
    const final = runs.flatMap((r) => r.final);
    await captures.stop();
    await captures.collect(end !== null || reported.some(failing), reported, true, neverStarted);
    if (end) return end;
    const crashed = runs.find((r) => r.crashed !== null)?.crashed;
    if (crashed) return errored(crashed);
    return testCasesOutcome(retries > 0 ? [...lastTries(final).values()] : final);
  };

  if (!takesBatches(step, ctx.shard)) {
    const ran = await runList(amInstrumentCommand(step, target), listed, null);
    return "stop" in ran ? stopWith(ran.stop) : finish([ran]);
  }

  const runs: Array<Extract<ListRan, { final: TestCase[] }>> = [];
  const batches = await runShardBatches(
    ctx.shard,
    listed,
    (line) => ctx.log("agent", line),
    async (batch): Promise<BatchRan> => {
      if (ctx.signal.aborted) return { stop: { status: "cancelled", message: abortMessage(ctx.signal) } };
      if (batch.tests.length === 0) return { ran: true };
      // The exact list goes to the device as a file (a command line would not hold thousands of tests).
      const local = path.join(ctx.workDir, `testbay-batch-${batch.id}.txt`);
      const remote = `/data/local/tmp/testbay-batch-${batch.id}.txt`;
      await writeFile(local, testFileContents(batch.tests));
      const pushed = await adb.run(["push", local, remote], Math.min(left(), shortCommandMs));
      if (ctx.signal.aborted) return { stop: { status: "cancelled", message: abortMessage(ctx.signal) } };
      if (!pushed.ok) {
        const why = `adb push of the test file failed: ${pushed.lines.at(-1) ?? pushed.exitCode}`;
        return { stop: pushed.deviceLost || !(await adb.present()) ? lost(why) : errored(why) };
      }
      const keys = new Set(batch.tests.map((t) => testKey(t.classname, t.name)));
      const ran = await runList(amInstrumentCommand(step, target, { testFile: remote }), batch.tests, keys);
      if ("stop" in ran) return ran;
      runs.push(ran);
      await adb.shell(`rm -f ${remote}`, shortCommandMs);
      return { ran: true, last: ran.end !== null };
    },
  );
  if (batches.stopped?.deviceLost || batches.stopped?.status === "cancelled")
    return stopWith(batches.stopped);
  if (batches.stopped) {
    // A server call failed: what ran is reported, and the step errors so the run is not taken as complete.
    await finish(runs);
    return batches.stopped;
  }
  return finish(runs);
}

/** What one list run (the whole listing, or one batch) came to. */
type ListRan =
  | { stop: StepOutcome }
  | {
      /** Each test's tries (the last try of each when the step makes retries). */
      final: TestCase[];
      /** An outcome that ends the step whatever the tests say: out of time. */
      end: StepOutcome | null;
      /** Why the step errors when the runner crashed and left tests failing; else null. */
      crashed: string | null;
    };

interface RunAndReport {
  adb: Adb;
  ctx: StepContext;
  captures: Captures;
  command: string;
  /** The try's number on every test case it reports; undefined when the step makes no retries. */
  retry: number | undefined;
  /** The tests (testKey) the run is for (a rerun's one test, a batch's tests); null: every test it reports. */
  only: ReadonlySet<string> | null;
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
    // A rerun of one index of a parameterized method runs every index (see singleTestSpec), and so does a
    // batch's testFile: only the run's own tests count.
    if (only !== null && !only.has(key)) return;
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
