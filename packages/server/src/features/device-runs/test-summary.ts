/**
 * What one attempt of a device run found, counted per distinct test: a test reported several times (a rerun
 * of a failed test, a batch sent twice under new seqs) counts once, with its last reported status. The
 * dashboard's test list (features/executions/test-case-view.ts) uses `isFlaky` too, so the summary and the
 * list never disagree on what is flaky.
 */
import type { TestCaseStatus } from "../../db/schema.ts";

/** One test_case report of a device run, in the order reported (attempt, then seq). */
export interface TestReport {
  classname: string;
  name: string;
  attempt: number;
  status: TestCaseStatus;
  /** The test is quarantined (as the attempt ends): its failure does not fail the run. */
  quarantined?: boolean;
}

/** What an attempt of a device run found, and (added up, execution-outcome.ts) what its execution found. */
export interface Summary {
  tests: number;
  passed: number;
  failed: number;
  skipped: number;
  flaky: number;
  /** Failed tests that were quarantined and so did not fail their run (added with quarantine, issue 15). */
  quarantined_failures?: number;
}

const failing = (status: TestCaseStatus) => status === "failed" || status === "errored";

/**
 * A test is flaky when its final (last reported) status is passed after a failed or errored report of the
 * same test in the same device run, in this attempt or an earlier one. Failing after passing is not flaky:
 * it is a failure. `history`: the test's reports in the order reported, the final one last.
 */
export function isFlaky(history: ReadonlyArray<{ status: TestCaseStatus }>): boolean {
  const final = history.at(-1);
  return final?.status === "passed" && history.slice(0, -1).some((report) => failing(report.status));
}

export function emptySummary(): Summary {
  return { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0, quarantined_failures: 0 };
}

/**
 * The summary of attempt `attempt` of a device run from all of the run's reports (every attempt, in the
 * order reported). Tests not reported in this attempt are history (the run was re-queued and they did not
 * come back), not results. `errored` counts as failed: both mean the test did not pass.
 */
export function attemptSummary(reports: readonly TestReport[], attempt: number): Summary {
  const byTest = new Map<string, TestReport[]>();
  for (const report of reports) {
    const key = `${report.classname}\u0000${report.name}`;
    const history = byTest.get(key);
    if (history) history.push(report);
    else byTest.set(key, [report]);
  }
  const summary = emptySummary();
  for (const history of byTest.values()) {
    const final = history.at(-1);
    if (!final || final.attempt !== attempt) continue;
    summary.tests++;
    if (final.status === "passed") summary.passed++;
    else if (final.status === "skipped") summary.skipped++;
    else {
      // Still reported as a failure; counted apart too, so the run's status can leave it out.
      summary.failed++;
      if (final.quarantined) summary.quarantined_failures = (summary.quarantined_failures ?? 0) + 1;
    }
    if (isFlaky(history)) summary.flaky++;
  }
  return summary;
}
