/** How a step turns the end of its command (exit code, timeout, cancel) into a StepOutcome. */
import { abortMessage, formatSeconds } from "./outcome.ts";
import type { ProcessResult } from "./process-runner.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

/**
 * The step's time limit: the context already carries it, but a step's own timeout_seconds is applied too
 * so a runner is right even when the job runner passed the plan's remaining time.
 */
export function stepTimeoutMs(step: { timeout_seconds?: number }, ctx: StepContext): number {
  const own = step.timeout_seconds === undefined ? Number.POSITIVE_INFINITY : step.timeout_seconds * 1000;
  return Math.min(own, ctx.timeoutMs);
}

/** `tool` names the command in messages ("maestro could not start: …"). */
export function processOutcome(
  result: ProcessResult,
  ctx: StepContext,
  timeoutMs: number,
  tool: string,
): StepOutcome {
  if (result.spawnError !== null) {
    return { status: "errored", message: `${tool} could not start: ${result.spawnError}`, exit_code: null };
  }
  if (result.aborted) return { status: "cancelled", message: abortMessage(ctx.signal), exit_code: null };
  if (result.timedOut) {
    return { status: "errored", message: `timed out after ${formatSeconds(timeoutMs)}`, exit_code: null };
  }
  if (result.exitCode === 0) return { status: "passed", message: null, exit_code: 0 };
  if (result.exitCode !== null) {
    return { status: "failed", message: `exit code ${result.exitCode}`, exit_code: result.exitCode };
  }
  return { status: "failed", message: `killed by ${result.signal ?? "a signal"}`, exit_code: null };
}
