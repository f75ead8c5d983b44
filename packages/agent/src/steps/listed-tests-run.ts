/**
 * The run stage of a step that lists its tests before it runs them (instrumentation-step.ts, xcuitest-step.ts):
 * the whole listing in one run, or, in a sharded step, batch after batch of the tests the server hands it
 * (shard-batches.ts). After each run, every test it was meant to run and did not report is reported errored
 * ("did not run: …"), so a crash cannot make tests go missing; with retry_failed_tests each failed test then
 * runs again alone (retry-failed-tests.ts). All runs are under the same captures, stopped and collected once
 * at the end. What one run is (am instrument, xcodebuild test-without-building) is the framework's.
 */
import type { ShardBatch, Step } from "@testbay/client";
import { failing } from "../android/device-captures.ts";
import { testKey } from "../android/logcat-cut.ts";
import type { DeviceCaptures } from "./device-step.ts";
import { cancelled, errored, testCasesOutcome } from "./outcome.ts";
import { lastTries, type Rerun, retryFailedTests, type TestRef } from "./retry-failed-tests.ts";
import { type BatchRan, runShardBatches, takesBatches } from "./shard-batches.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";

/** What one run of the framework came to, once it has reported what it ran. */
export type TestsRan =
  | { stop: StepOutcome }
  | {
      /** Tests (testKey) the run reported. */
      seen: ReadonlySet<string>;
      /** Why the tests it was meant to run and did not report did not run. */
      why: string;
      /** The same, for a test run alone (a runner may end well and still skip it). */
      whyAlone: string;
      /** The step's outcome when the run used up the step's time, else null: no rerun then. */
      timedOut: StepOutcome | null;
      /** Why the step errors even if every test passed (the runner crashed or failed), else null. */
      crashed: string | null;
    };

/** What the framework does for each run; `Selection` is how it names the tests a run is for. */
export interface ListedTestsFramework<Selection> {
  /** Every listed test: the step's own filters (without the `first` tests, when there are any). */
  whole: Selection;
  /**
   * Tests to run before all others on every shard, outside the sharded set (always_run, always-run.ts): run
   * as one list, with retries like any, before the whole listing or the first batch.
   */
  first?: { selection: Selection; tests: readonly TestRef[] };
  alone(test: TestRef): Selection;
  /** A server's batch made ready to run (its list pushed, say) and what to clear after; or why to stop. */
  batch(
    batch: ShardBatch,
  ): Promise<{ selection: Selection; after?(): Promise<void> } | { stop: StepOutcome }>;
  /**
   * One run: each test case reported with `report` as it is known, numbered `retry` (undefined when the step
   * makes no retries); when `only` is set, only those tests (testKey), as a runner may run more.
   */
  run(
    selection: Selection,
    retry: number | undefined,
    only: ReadonlySet<string> | null,
    report: (testCase: TestCase) => void,
  ): Promise<TestsRan>;
}

/** What one list run (the whole listing, or one batch) came to. */
type ListRan =
  | { stop: StepOutcome }
  | {
      /** Each test's tries (the last try of each when the step makes retries). */
      final: TestCase[];
      /** An outcome that ends the step whatever the tests say: out of time. */
      end: StepOutcome | null;
      /** Why the step errors although the tests may say otherwise, else null. */
      crashed: string | null;
    };
type ListDone = Extract<ListRan, { final: TestCase[] }>;

/**
 * `listed`: null when the framework could not list (the whole set then runs, unchecked). `captures`: one
 * device log and one video for all the runs, each try's part named on its test case.
 */
export async function runListedTests<Selection>(
  step: Step & { retry_failed_tests?: number },
  ctx: StepContext,
  captures: DeviceCaptures | null,
  listed: readonly TestRef[] | null,
  framework: ListedTestsFramework<Selection>,
): Promise<StepOutcome> {
  const retries = step.retry_failed_tests ?? 0;
  const reported: TestCase[] = [];
  // Tries the runner never started: they have no part of the device log to cut (device-captures.ts).
  const neverStarted = new Set<TestCase>();
  const report = (testCase: TestCase, started = true) => {
    reported.push(testCase);
    if (!started) neverStarted.add(testCase);
    ctx.testCase(testCase);
  };
  const run = (selection: Selection, retry: number, only: ReadonlySet<string> | null) =>
    framework.run(selection, retries > 0 ? retry : undefined, only, report);

  /** One run meant to run `expected` (only those count when `only` is set), then each failed test alone. */
  const runList = async (
    selection: Selection,
    expected: readonly TestRef[],
    only: ReadonlySet<string> | null,
  ): Promise<ListRan> => {
    const from = reported.length;
    const first = await run(selection, 0, only);
    // A cancelled run, or one whose device went: nothing about the tests that did not finish is known, and the
    // run is handed back (device lost) without a failure reported for it.
    if ("stop" in first) return first;
    for (const test of expected) {
      if (first.seen.has(testKey(test.classname, test.name))) continue;
      report(didNotRun(test, first.why, retries > 0 ? { retry: 0 } : {}), false);
    }
    let final = reported.slice(from);
    let end = first.timedOut;
    if (retries > 0 && end === null) {
      const done = await retryFailedTests(final, retries, async (test, retry): Promise<Rerun> => {
        if (ctx.signal.aborted) return { stop: cancelled(ctx.signal) };
        const key = testKey(test.classname, test.name);
        ctx.log("agent", `running ${key} again alone (retry ${retry} of ${retries})`);
        const at = reported.length;
        const rerun = await run(framework.alone(test), retry, new Set([key]));
        if ("stop" in rerun) return rerun;
        let tried = reported
          .slice(at)
          .findLast((c) => testKey(c.classname, c.name) === key && c.retry === retry);
        if (!tried) {
          tried = didNotRun(test, rerun.whyAlone, { retry });
          report(tried, false);
        }
        // Out of time: this try is reported, and there is no time for another.
        return rerun.timedOut ? { stop: rerun.timedOut } : { tried };
      });
      if (done.stopped?.deviceLost || done.stopped?.status === "cancelled") return { stop: done.stopped };
      final = done.final;
      if (done.reruns > 0) {
        const flaky = final.filter((c) => c.status === "passed" && (c.retry ?? 0) > 0);
        ctx.log("agent", `${done.reruns} reruns; ${flaky.length} tests passed on a rerun (flaky)`);
      }
      end = done.stopped;
    }
    // A crash that kept tests from running errors the step, unless their reruns all passed.
    const crashed = first.crashed !== null && (retries === 0 || final.some(failing)) ? first.crashed : null;
    return { final, end, crashed };
  };

  const stopWith = async (outcome: StepOutcome) => {
    await captures?.stop();
    await captures?.collect(false, reported, true, neverStarted);
    return outcome;
  };
  /** The step's outcome from every list run: out of time first, then a crash, then the tests' statuses. */
  const finish = async (runs: readonly ListDone[]) => {
    const end = runs.find((r) => r.end !== null)?.end ?? null;
    const final = runs.flatMap((r) => r.final);
    await captures?.stop();
    await captures?.collect(end !== null || reported.some(failing), reported, true, neverStarted);
    if (end) return end;
    const crashed = runs.find((r) => r.crashed !== null)?.crashed;
    if (crashed) return errored(crashed);
    return testCasesOutcome(retries > 0 ? [...lastTries(final).values()] : final);
  };

  const runs: ListDone[] = [];
  const first = framework.first;
  if (first !== undefined && first.tests.length > 0) {
    ctx.log("agent", `${first.tests.length} tests to run first (always_run)`);
    const keys = new Set(first.tests.map((t) => testKey(t.classname, t.name)));
    const ran = await runList(first.selection, first.tests, keys);
    if ("stop" in ran) return stopWith(ran.stop);
    runs.push(ran);
    if (ran.end !== null) return finish(runs);
  }
  if (!takesBatches(step, ctx.shard) || listed === null) {
    const ran = await runList(framework.whole, listed ?? [], null);
    return "stop" in ran ? stopWith(ran.stop) : finish([...runs, ran]);
  }
  const batches = await runShardBatches(
    ctx.shard,
    listed,
    (line) => ctx.log("agent", line),
    async (batch): Promise<BatchRan> => {
      if (ctx.signal.aborted) return { stop: cancelled(ctx.signal) };
      if (batch.tests.length === 0) return { ran: true };
      const ready = await framework.batch(batch);
      if ("stop" in ready) return ready;
      const keys = new Set(batch.tests.map((t) => testKey(t.classname, t.name)));
      const ran = await runList(ready.selection, batch.tests, keys);
      if ("stop" in ran) return ran;
      runs.push(ran);
      await ready.after?.();
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

/** A test the run was meant to run and did not report, reported errored so that it does not go missing. */
function didNotRun(test: TestRef, why: string, retry: { retry?: number }): TestCase {
  return {
    classname: test.classname,
    name: test.name,
    status: "errored",
    duration_ms: null,
    message: `did not run: ${why}`,
    details: null,
    ...retry,
  };
}
