import type { ExecutionStatus, TestCaseStatus } from "../../db/schema.ts";
import type { Summary } from "./executions.repo.ts";

export type FinalStatus = "passed" | "failed" | "errored" | "cancelled";

const finalStatuses = new Set<ExecutionStatus>(["passed", "failed", "errored", "cancelled"]);

export function isFinal(status: ExecutionStatus): status is FinalStatus {
  return finalStatuses.has(status);
}

/** Counts one attempt's test cases. `errored` cases count as failed: both mean the test did not pass. */
export function summarize(statuses: Iterable<TestCaseStatus>, flaky = 0): Summary {
  const summary = { tests: 0, passed: 0, failed: 0, skipped: 0, flaky };
  for (const status of statuses) {
    summary.tests++;
    if (status === "passed") summary.passed++;
    else if (status === "skipped") summary.skipped++;
    else summary.failed++;
  }
  return summary;
}

/**
 * The status a device run ends an attempt with: what the agent reported, except that a run whose tests
 * failed is `failed` even if every step's exit code said otherwise.
 */
export function attemptStatus(reported: FinalStatus, summary: Summary): FinalStatus {
  if (reported === "passed" && summary.failed > 0) return "failed";
  return reported;
}

/**
 * An execution's status from its device runs: queued until one starts, running until all end, then the most
 * telling ending: cancelled (someone stopped it) over failed (a real finding) over errored (no verdict:
 * the infrastructure failed) over passed.
 */
export function executionStatus(runs: ReadonlyArray<{ status: ExecutionStatus }>): ExecutionStatus {
  if (runs.every((run) => run.status === "queued")) return "queued";
  if (!runs.every((run) => isFinal(run.status))) return "running";
  for (const status of ["cancelled", "failed", "errored"] as const) {
    if (runs.some((run) => run.status === status)) return status;
  }
  return "passed";
}

/** Adds the summaries of the device runs' latest attempts; `flaky` is counted over all attempts. */
export function addSummaries(summaries: Iterable<Summary | null>, flaky: number): Summary {
  const total = { tests: 0, passed: 0, failed: 0, skipped: 0, flaky };
  for (const summary of summaries) {
    if (!summary) continue;
    total.tests += summary.tests;
    total.passed += summary.passed;
    total.failed += summary.failed;
    total.skipped += summary.skipped;
  }
  return total;
}
