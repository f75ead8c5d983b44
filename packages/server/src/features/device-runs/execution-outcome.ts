/**
 * What an execution's status and summary become from its device runs. Pure; settle-query.ts writes the same
 * rules as one SQL UPDATE (so the execution is settled from the runs as the database has them, without a
 * read-then-write race), built from `endingPrecedence` and `summaryKeys` below, and
 * device-runs.int.test.ts checks the two agree on both databases.
 */
import type { ExecutionStatus } from "../../db/schema.ts";
import { type FinalStatus, isFinal } from "./attempt-outcome.ts";
import type { Summary } from "./test-summary.ts";

/**
 * When every run has ended, the execution takes the most telling ending: cancelled (someone stopped it)
 * over failed (a real finding) over errored (no verdict: the infrastructure failed) over passed.
 */
export const endingPrecedence = ["cancelled", "failed", "errored"] as const satisfies readonly FinalStatus[];

/** The counts of a summary, added up over device runs. */
export const summaryKeys = [
  "tests",
  "passed",
  "failed",
  "skipped",
  "flaky",
  "quarantined_failures",
] as const satisfies ReadonlyArray<keyof Summary>;

/** The device runs of an execution, counted by status. */
export interface RunTally {
  runs: number;
  queued: number;
  /** Runs that ended (passed, failed, errored, cancelled). */
  ended: number;
  cancelled: number;
  failed: number;
  errored: number;
}

export function tally(runs: ReadonlyArray<{ status: ExecutionStatus }>): RunTally {
  const counts: RunTally = { runs: 0, queued: 0, ended: 0, cancelled: 0, failed: 0, errored: 0 };
  for (const { status } of runs) {
    counts.runs++;
    if (status === "queued") counts.queued++;
    if (isFinal(status)) counts.ended++;
    if (status === "cancelled" || status === "failed" || status === "errored") counts[status]++;
  }
  return counts;
}

/** The status the runs say: queued until one starts, running until all end, then the most telling ending. */
export function derivedStatus(runs: RunTally): ExecutionStatus {
  if (runs.queued === runs.runs) return "queued";
  if (runs.ended < runs.runs) return "running";
  for (const status of endingPrecedence) if (runs[status] > 0) return status;
  return "passed";
}

/** Once started, an execution stays running while a run waits for another attempt. */
export function executionStatus(runs: RunTally, started: boolean): ExecutionStatus {
  const derived = derivedStatus(runs);
  return derived === "queued" && started ? "running" : derived;
}

/** Adds the device runs' latest summaries (each counts its own flaky tests, test-summary.ts). */
export function addSummaries(summaries: Iterable<Summary | null>): Summary {
  const total: Summary = { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0, quarantined_failures: 0 };
  for (const summary of summaries) {
    if (!summary) continue;
    for (const key of summaryKeys) total[key] += summary[key] ?? 0;
  }
  return total;
}
