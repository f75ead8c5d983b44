import type { TestHistory } from "../../api/test-history.ts";

export type HistoryKind = "new" | "flaky" | "regression" | "failing";

const runs = (count: number) => (count === 1 ? "1 run" : `${count} runs`);

/**
 * What a failed test's history says of this failure, in one short sentence with its numbers: is it new, flaky,
 * a regression (it passed every run before this one) or failing again? `history` covers the plan's last
 * finished runs: this run's result is in it once the run has finished (and it is the newest run of the test);
 * while the run goes on, the history is all earlier runs. Null when there is nothing true to say (an old run
 * whose test left the window).
 */
export function historyNote(
  history: TestHistory | undefined,
  run: { id: string; finished: boolean },
): { kind: HistoryKind; text: string } | null {
  if (!history) return run.finished ? null : { kind: "new", text: "New: first run of this test" };
  const includesThisRun = run.finished && history.last_execution_id === run.id;
  if (includesThisRun && history.new) return { kind: "new", text: "New: first run of this test" };
  if (history.flaky_runs > 0) {
    return {
      kind: "flaky",
      text: `Flaky: passed after failing in ${history.flaky_runs} of ${runs(history.runs)}`,
    };
  }
  // Once the run has finished this failure is the newest in the history, and the runs before are the others;
  // while it runs they are all of them. A finished run that is not the newest cannot say what came before it.
  const knowsRunsBefore = includesThisRun || !run.finished;
  const before = includesThisRun ? history.runs - 1 : history.runs;
  const failedBefore = includesThisRun ? history.failures - 1 : history.failures;
  if (knowsRunsBefore && before > 0 && failedBefore === 0) {
    return {
      kind: "regression",
      text: `Passed the last ${before === 1 ? "run" : runs(before)} before this one`,
    };
  }
  return {
    kind: "failing",
    text: `Failed ${history.failures} of the last ${runs(history.runs)}`,
  };
}
