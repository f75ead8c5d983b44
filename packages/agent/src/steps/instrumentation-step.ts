/**
 * The instrumentation step, in the order a real device needs it (device-step.ts): install the app and the
 * test APK; clear the app's data if asked; list the tests (`-e log true`) so every test is accounted for;
 * start logcat and, if asked, video; run the tests, reporting each as it ends with a screenshot of each
 * failure, then each failed one again alone or the batches of a sharded step (listed-tests-run.ts), a batch's
 * tests pushed as a testFile; stop the captures and keep them as artifacts named on their test cases. A
 * device that goes away on the way is an infrastructure error (the run is handed back), not a test failure.
 * API.md §14's options add to this (instrumentation-device-setup.ts before the run, instrumentation-pulls.ts
 * after it): the device entry's locale and orientation, the orchestrator's APKs and additional_apks installed
 * before the app, version files pushed, every run through AndroidX Test Orchestrator when asked, always_run
 * tests first, and the plan's pull paths and coverage files fetched on every shard, also when tests failed.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { InstrumentationStep } from "@testbay/client";
import { Adb } from "../android/adb.ts";
import {
  amInstrumentCommand,
  type InstrumentationTarget,
  type InstrumentOptions,
  singleTestSpec,
  testFileContents,
} from "../android/am-instrument.ts";
import { type Captures, startCaptures, withCaptures } from "../android/device-captures.ts";
import { apkNamed } from "../android/install-apk.ts";
import { testKey } from "../android/logcat-cut.ts";
import { splitAlwaysRun } from "./always-run.ts";
import { type Prepared, runDeviceStep, type StepTime } from "./device-step.ts";
import { installOnAndroid } from "./install-on-android.ts";
import { type CoverageFiles, prepareDevice } from "./instrumentation-device-setup.ts";
import { type FullInstrumentationStep, instrumentationOptions } from "./instrumentation-options.ts";
import { InstrumentationParser, uniqueTests } from "./instrumentation-parser.ts";
import { pullAfterRun } from "./instrumentation-pulls.ts";
import { runListedTests, type TestsRan } from "./listed-tests-run.ts";
import { cancelled, deviceLost, errored } from "./outcome.ts";
import { processOutcome } from "./process-outcome.ts";
import type { TestRef } from "./retry-failed-tests.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";

export const DEFAULT_RUNNER = "androidx.test.runner.AndroidJUnitRunner";

/** A listing or a short adb command that takes longer than this is stuck. */
const shortCommandMs = 120_000;

interface Ready {
  adb: Adb;
  target: InstrumentationTarget;
  listed: TestRef[];
  /** always_run tests, run first on every shard and left out of `listed`. */
  first: TestRef[];
  coverage: CoverageFiles | null;
}

export function runInstrumentationStep(step: InstrumentationStep, ctx: StepContext): Promise<StepOutcome> {
  return runDeviceStep(step, ctx, {
    refuse() {
      if (ctx.device === null || ctx.device.platform !== "android") {
        return errored("instrumentation needs an Android device");
      }
      if (ctx.binary.format !== "apk") {
        return errored(`instrumentation installs an .apk; this binary is an .${ctx.binary.format}`);
      }
      if (ctx.testPackage === null || ctx.testPackage.format !== "apk") {
        return errored(
          `version ${ctx.version} has no test package that is an APK: upload its test APK (testbay upload --test-file)`,
        );
      }
      return null;
    },
    prepare: (time) => prepare(step, ctx, time),
    startCaptures: ({ adb }) => startCaptures(step, ctx, adb),
    run: async (ready, captures, time) => {
      const outcome = await runTests(instrumentationOptions(step), ctx, ready, captures, time);
      // Also after failed tests (that is when screenshots and reports matter most); not from a device that went
      // away, nor on a cancel, which must end the step at once.
      if (outcome.deviceLost || outcome.status === "cancelled") return outcome;
      const pulled = await pullAfterRun(instrumentationOptions(step), ctx, ready.adb, ready.coverage, time);
      return pulled ?? outcome;
    },
  });
}

function runTests(
  step: FullInstrumentationStep,
  ctx: StepContext,
  { adb, target, listed, first, coverage }: Ready,
  captures: Captures,
  time: StepTime,
): Promise<StepOutcome> {
  const orchestrator = step.use_orchestrator
    ? { clearPackageData: step.clear_package_data === true }
    : undefined;
  // The plan's own names (a class stays one word), when any of its tests were listed.
  const alwaysRun = first.length > 0 ? [...new Set(step.always_run ?? first.map(singleTestSpec))] : [];
  return runListedTests<InstrumentOptions>(step, ctx, captures, listed, {
    whole: alwaysRun.length > 0 ? { notClasses: alwaysRun } : {},
    first: alwaysRun.length > 0 ? { selection: { classes: alwaysRun }, tests: first } : undefined,
    alone: (test) => ({ only: test }),
    batch: async (batch) => {
      // The exact list goes to the device as a file (a command line would not hold thousands of tests).
      const local = path.join(ctx.workDir, `testbay-batch-${batch.id}.txt`);
      const remote = `/data/local/tmp/testbay-batch-${batch.id}.txt`;
      await writeFile(local, testFileContents(batch.tests));
      const pushed = await adb.run(["push", local, remote], Math.min(time.left(), shortCommandMs));
      if (ctx.signal.aborted) return { stop: cancelled(ctx.signal) };
      if (!pushed.ok) {
        const why = `adb push of the test file failed: ${pushed.lines.at(-1) ?? pushed.exitCode}`;
        return {
          stop: pushed.deviceLost || !(await adb.present()) ? deviceLost(adb.serial, why) : errored(why),
        };
      }
      return {
        selection: { testFile: remote },
        after: async () => {
          await adb.shell(`rm -f ${remote}`, shortCommandMs);
        },
      };
    },
    run: (selection, retry, only, report) => {
      const command = amInstrumentCommand(step, target, {
        ...selection,
        orchestrator,
        coverage: coverage?.nextRun(),
      });
      return runAndReport({ adb, ctx, captures, command, retry, only, report, time });
    },
  });
}

/** The app and its tests installed (from files adb accepts), the app's data cleared if asked, the tests listed. */
async function prepare(
  step: InstrumentationStep,
  ctx: StepContext,
  time: StepTime,
): Promise<Prepared<Ready>> {
  // refuse() let only an Android device and an APK test package through.
  const device = ctx.device as NonNullable<StepContext["device"]>;
  const testPackage = ctx.testPackage as Extract<StepContext["testPackage"], { format: "apk" }>;
  const target: InstrumentationTarget = {
    testPackage: step.test_package ?? testPackage.test.package_name,
    runner: step.runner ?? testPackage.test.runner,
  };
  const adb = new Adb(device.serial, { workDir: ctx.workDir, signal: ctx.signal, log: ctx.log });
  const options = instrumentationOptions(step);
  // Settings, orchestrator, additional APKs: before the app, as API.md §14 orders them.
  const setup = await prepareDevice(options, ctx, adb, time);
  if ("outcome" in setup) return setup;
  let apks: string[];
  try {
    apks = [
      ...setup.apksFirst,
      await apkNamed(await ctx.appPath(), ctx.workDir, ctx.packageName),
      await apkNamed(await ctx.testPackagePath(), ctx.workDir, target.testPackage),
    ];
  } catch (error) {
    return { outcome: errored(`could not fetch the APKs: ${(error as Error).message}`) };
  }
  const installed = await installOnAndroid(adb, ctx, {
    apks,
    clearData: step.clear_package_data === true,
    left: time.left,
  });
  if (installed) return { outcome: installed };
  const pushed = await setup.pushFiles();
  if (pushed) return { outcome: pushed };

  // Listed without running them: the whole set, so a crash cannot make tests go missing. Straight from the
  // runner even under the orchestrator, which would start one instrumentation per listed test to say the same.
  const listing = await adb.shell(
    amInstrumentCommand(options, target, { listOnly: true }),
    Math.min(time.left(), shortCommandMs),
  );
  if (ctx.signal.aborted) return { outcome: cancelled(ctx.signal) };
  const listingRun = new InstrumentationParser(() => {});
  for (const line of listing.lines) listingRun.line(line);
  const listingEnd = listingRun.end();
  const listed = uniqueTests(listingRun.seen());
  if (!listingEnd.completed) {
    const why = `listing the tests failed: ${listingEnd.message}`;
    return {
      outcome: listing.deviceLost || !(await adb.present()) ? deviceLost(device.serial, why) : errored(why),
    };
  }
  if (listed.length === 0)
    return { outcome: errored("the test package has no tests that match the step's filter") };
  ctx.log("agent", `${listed.length} tests listed in ${target.testPackage}`);
  const { first, rest } = splitAlwaysRun(listed, options.always_run ?? []);
  return { ready: { adb, target, listed: rest, first, coverage: setup.coverage } };
}

interface RunAndReport {
  adb: Adb;
  ctx: StepContext;
  captures: Captures;
  command: string;
  /** The try's number on every test case it reports; undefined when the step makes no retries. */
  retry: number | undefined;
  /** The tests (testKey) the run is for (a rerun's one test, a batch's tests); null: every test it reports. */
  only: ReadonlySet<string> | null;
  report(testCase: TestCase): void;
  time: StepTime;
}

/**
 * One `am instrument` run: each test case reported as it ends, a failure with its screenshot; the tests the
 * parser closes at the end of the output wait until we know whether the device was lost.
 */
async function runAndReport(options: RunAndReport): Promise<TestsRan> {
  const { adb, ctx, captures, retry, only, report, time } = options;
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
  const run = await adb.shell(options.command, time.left(), (stream, line) => {
    if (stream === "stdout") parser.line(line);
  });
  runEnded = true;
  const end = parser.end();
  await reporting;

  const ran = processOutcome(run, ctx, time.timeoutMs, "adb");
  if (ran.status === "cancelled") return { stop: ran };
  if (!end.completed && !run.timedOut && (run.deviceLost || !(await adb.present()))) {
    return { stop: deviceLost(adb.serial, end.message ?? "adb lost the device during the run") };
  }
  for (const testCase of heldAtEnd) report(await withCaptures(testCase, captures, adb, ctx, false));
  const why = run.timedOut
    ? `timed out after ${Math.round(time.timeoutMs / 1000)} s`
    : (end.message ?? "it did not run");
  const crashed =
    !run.timedOut && !end.completed
      ? end.crashed
        ? `app crashed: ${end.message}`
        : (end.message ?? "instrumentation did not complete")
      : null;
  return {
    seen,
    why,
    whyAlone: end.completed ? "the runner did not run it alone" : why,
    timedOut: run.timedOut ? ran : null,
    crashed,
  };
}
