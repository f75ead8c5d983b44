/**
 * What the end of a device run's attempt means: the status it ends with, and whether the run goes back to
 * the queue for another attempt or ends. Pure: the lifecycle (device-runs.ts) reads what it needs, asks here,
 * and writes the answer.
 */
import type { ExecutionStatus } from "../../db/schema.ts";
import type { Summary } from "./test-summary.ts";

export type FinalStatus = "passed" | "failed" | "errored" | "cancelled";

const finalStatuses = new Set<ExecutionStatus>(["passed", "failed", "errored", "cancelled"]);

export function isFinal(status: ExecutionStatus): status is FinalStatus {
  return finalStatuses.has(status);
}

/**
 * An agent that shuts down hands its runs back (errored, reason agent_shutdown), and a run whose device
 * vanished mid-run (adb lost it: reason device_lost) is an infrastructure error: neither says anything about
 * the app, so the run is queued again even past the plan's max_attempts, up to this many attempts in all.
 */
export const maxAttemptsWithHandBacks = 10;

const handBackReasons = new Set(["agent_shutdown", "device_lost"]);

/** The attempt as it stands when it ends. */
export interface EndingAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
  /** Someone asked to cancel the execution: cancel wins over everything else. */
  cancelRequested: boolean;
  /** The attempt's tests, counted (test-summary.ts). */
  summary: Summary;
}

export interface AttemptEnd {
  status: FinalStatus;
  /** The run goes back to the queue for another attempt (its status stays queued, not `status`). */
  requeued: boolean;
}

/**
 * The status a device run ends an attempt with: what the agent reported, except that a run whose tests
 * failed is `failed` even if every step's exit code said otherwise, and that a run the agent reported failed
 * only because of quarantined tests passes (API.md §6: a quarantined test's failure does not fail its
 * execution). A failed run without a failed test failed for another reason (a step): that stays failed.
 */
export function attemptStatus(reported: FinalStatus, summary: Summary): FinalStatus {
  const counted = summary.failed - (summary.quarantined_failures ?? 0);
  if (reported === "passed" && counted > 0) return "failed";
  if (reported === "failed" && summary.failed > 0 && counted === 0) return "passed";
  return reported;
}

/**
 * The agent reported the end (POST …/complete). A failed or errored attempt goes back to the queue while
 * the plan allows more attempts; a hand-back (agent_shutdown, device_lost) while under
 * `maxAttemptsWithHandBacks` whatever the plan says; a cancelled execution's run ends cancelled.
 */
export function reportedEnd(ending: EndingAttempt, reported: FinalStatus, reason: string | null): AttemptEnd {
  if (ending.cancelRequested) return { status: "cancelled", requeued: false };
  const status = attemptStatus(reported, ending.summary);
  if (status === "errored" && reason !== null && handBackReasons.has(reason)) {
    return { status, requeued: ending.attempt < maxAttemptsWithHandBacks };
  }
  const retriable = status === "failed" || status === "errored";
  return { status, requeued: retriable && ending.attempt < ending.maxAttempts };
}

/**
 * A WebDriver session's run (API.md §12) ends once: its client holds Appium's state, so it is never queued
 * again, whatever the agent reported. Its status is what the agent reported (passed for a DELETE, errored for
 * the other ends) unless the client set a result (POST /v1/executions/{id}/result), which stands, but for a
 * cancel: someone stopped the session.
 */
export function sessionEnd(end: AttemptEnd, clientResult: "passed" | "failed" | null): AttemptEnd {
  if (end.status === "cancelled" || clientResult === null) return { status: end.status, requeued: false };
  return { status: clientResult, requeued: false };
}

/** Nobody renewed the lease (reason agent_lost): errored, and queued again while the plan allows. */
export function lapsedEnd(ending: EndingAttempt): AttemptEnd {
  if (ending.cancelRequested) return { status: "cancelled", requeued: false };
  return { status: "errored", requeued: ending.attempt < ending.maxAttempts };
}
