/**
 * Which tests an execution turned flaky (test.flaky_detected, issue 15): flaky in this execution (passed
 * after failing, as GET /tests counts it) and flaky in none of the plan's previous finished executions of the
 * window. A test flaky again while it still shows as flaky in the window is old news, not an event. Pure:
 * the same history code as GET /tests (test-history.ts) over what test-history.repo.ts reads.
 */
import type { FinalTestCase, WindowExecution } from "./test-history.repo.ts";
import { type TestHistory, testHistories } from "./test-history.ts";

/** How many previous finished executions a test must have been flaky-free in (GET /tests' default window). */
export const flakyWindow = 20;

/**
 * The tests `execution` newly turned flaky, each with its history over the window as GET /tests shows it
 * once this execution finished (this execution and the newest `size - 1` before it).
 * `window`: the plan's finished executions newest first, this one included or not; `cases`: the final test
 * cases of this execution and of the window's.
 */
export function newlyFlaky(
  testPlanId: string,
  execution: WindowExecution,
  window: readonly WindowExecution[],
  cases: readonly FinalTestCase[],
  size = flakyWindow,
): TestHistory[] {
  const flakyNow = testHistories(testPlanId, [execution], cases).filter((test) => test.flaky_runs > 0);
  if (flakyNow.length === 0) return [];
  const previous = window.filter((e) => e.id !== execution.id).slice(0, size);
  const flakyBefore = new Set(
    testHistories(testPlanId, previous, cases)
      .filter((test) => test.flaky_runs > 0)
      .map((test) => test.id),
  );
  const fresh = new Set(flakyNow.filter((test) => !flakyBefore.has(test.id)).map((test) => test.id));
  if (fresh.size === 0) return [];
  // The window GET /tests shows now: normally this execution is among the newest; one that finished after
  // `size` newer ones did is put first, as the run that just ended.
  let shown = window.slice(0, size);
  if (!shown.some((e) => e.id === execution.id)) shown = [execution, ...previous.slice(0, size - 1)];
  return testHistories(testPlanId, shown, cases).filter((test) => fresh.has(test.id));
}
