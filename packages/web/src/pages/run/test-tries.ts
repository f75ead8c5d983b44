import type { TestCase } from "../../api/types.ts";

export type TestTry = TestCase["attempts"][number];

/** A test worth showing its tries: it ran more than once (a rerun alone, or a later attempt of its device run). */
export const hasTries = (test: TestCase) => test.attempts.length > 1;

/** The tests that passed only on a retry: listed after the failures, since they are what turns a suite flaky. */
export const passedOnRetry = (tests: readonly TestCase[]) =>
  tests.filter((test) => test.flaky && test.status === "passed");

/**
 * A try's name in the list of a test's tries: "Try 2", with the device run's attempt when the test ran in more
 * than one ("Try 3 · attempt 2 of the device run"), and "rerun alone" for a retry_failed_tests rerun.
 */
export function tryLabel(tries: readonly TestTry[], index: number): string {
  const one = tries[index];
  if (!one) return `Try ${index + 1}`;
  const attempts = new Set(tries.map((t) => t.attempt)).size;
  return [
    `Try ${index + 1}`,
    attempts > 1 ? `attempt ${one.attempt} of the device run` : undefined,
    one.retry > 0 ? "rerun alone" : undefined,
  ]
    .filter(Boolean)
    .join(" · ");
}

/** The tries in a few words for the folded list's title: "failed, then passed". */
export const triesInWords = (tries: readonly TestTry[]) => tries.map((t) => t.status).join(", then ");
