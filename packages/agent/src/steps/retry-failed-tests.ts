/**
 * retry_failed_tests (API.md §5): after a device step's run, each test whose try failed or errored (a test
 * that did not run because the run crashed included) is run again alone, up to `retries` more times,
 * stopping at its first try that does not fail. Tries are reported as they are made, each as its own test
 * case numbered by `retry`; the test's status is its last try's. Kept apart from adb so that the rules
 * (which tests, in what order, when to stop) are tested against fakes.
 */
import { testKey } from "../android/logcat-cut.ts";
import type { StepOutcome, TestCase } from "./step-types.ts";

export interface TestRef {
  classname: string;
  name: string;
}

/**
 * What one rerun of one test gave: the try as reported, or a reason to make no more tries at all (the
 * device was lost, the step was cancelled or ran out of time), with the step's outcome then.
 */
export type Rerun = { tried: TestCase } | { stop: StepOutcome };

export interface RetriesDone {
  /** Each test's last try, in the order the tests were first reported. */
  final: TestCase[];
  /** Why tries stopped before the rule said, else null. */
  stopped: StepOutcome | null;
  /** Reruns made. */
  reruns: number;
}

export const failingTry = (testCase: TestCase) =>
  testCase.status === "failed" || testCase.status === "errored";

/** The last try of each test, in the order the tests were first reported. */
export function lastTries(tries: readonly TestCase[]): Map<string, TestCase> {
  const last = new Map<string, TestCase>();
  for (const testCase of tries) last.set(testKey(testCase.classname, testCase.name), testCase);
  return last;
}

/**
 * Reruns each failing test of `firstTries` alone with `rerun(test, retry)` (retry 1, 2, … up to `retries`)
 * until a try does not fail. Tests are taken one after another in the order they were reported, so one
 * test's reruns never interleave with another's (each runs alone on the device).
 */
export async function retryFailedTests(
  firstTries: readonly TestCase[],
  retries: number,
  rerun: (test: TestRef, retry: number) => Promise<Rerun>,
): Promise<RetriesDone> {
  const last = lastTries(firstTries);
  let reruns = 0;
  for (const [key, first] of last) {
    let current = first;
    for (let retry = 1; retry <= retries && failingTry(current); retry++) {
      const result = await rerun({ classname: first.classname, name: first.name }, retry);
      if ("stop" in result) return { final: [...last.values()], stopped: result.stop, reruns };
      reruns++;
      current = result.tried;
      last.set(key, current);
    }
  }
  return { final: [...last.values()], stopped: null, reruns };
}
