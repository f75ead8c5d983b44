/**
 * Small rules for combining what a step saw into one StepOutcome, shared by every runner so a step reads the
 * same whichever tool ran it.
 */
import type { StepOutcome, StepStatus, TestCase } from "./step-types.ts";

const severity: Record<StepStatus, number> = { passed: 0, failed: 1, errored: 2, cancelled: 3 };

export const PASSED: StepOutcome = { status: "passed", message: null };

/** The most severe outcome (cancelled > errored > failed > passed); the first one wins a tie. */
export function worstOutcome(...outcomes: StepOutcome[]): StepOutcome {
  let worst = PASSED;
  for (const outcome of outcomes) {
    if (severity[outcome.status] > severity[worst.status]) worst = outcome;
  }
  return worst;
}

/** Failed when any reported test case failed or errored; skipped cases do not fail a step. */
export function testCasesOutcome(cases: readonly TestCase[]): StepOutcome {
  const bad = cases.filter((c) => c.status === "failed" || c.status === "errored");
  if (bad.length === 0) return PASSED;
  return { status: "failed", message: `${bad.length} of ${cases.length} test cases failed` };
}

/** "600 s", "0.25 s": seconds as people write them in a message. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** What to tell the user when the step's signal was aborted (the reason, when the runner gave one). */
export function abortMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === "string" && reason !== "") return reason;
  if (reason instanceof Error && reason.name !== "AbortError" && reason.message !== "") return reason.message;
  return "cancelled";
}

/** The step could not do its work (a missing file, a tool that failed): not the tests' failure. */
export function errored(message: string): StepOutcome {
  return { status: "errored", message };
}

/** The step's signal was aborted: cancelled, with the reason abortMessage gives. */
export function cancelled(signal: AbortSignal): StepOutcome {
  return { status: "cancelled", message: abortMessage(signal) };
}

/**
 * The device went away: an infrastructure error, so the run is handed back instead of reported failed
 * (StepOutcome.deviceLost in step-types.ts). Every device step words it alike so a reader sees one reason whichever framework ran.
 */
export function deviceLost(serial: string, why: string): StepOutcome {
  return { status: "errored", message: `device ${serial} was lost: ${why}`, deviceLost: true };
}
