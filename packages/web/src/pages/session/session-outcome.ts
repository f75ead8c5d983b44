/**
 * Why a session (API.md §12) came out as it did, in words: how it ended (its device run's `reason`, the agent's
 * end reason, docs/appium.md "How a session ends") and whether the client set its status itself (setSessionStatus
 * or POST /v1/executions/{id}/result), which the status tells apart from what the end alone would give.
 */
import type { Execution, ExecutionStatus } from "../../api/types.ts";

const endReasons: Record<string, string> = {
  deleted: "the client ended it (DELETE)",
  idle_timeout: "no command came within its idle timeout",
  max_duration: "it reached its maximum duration",
  cancelled: "it was cancelled",
  device_lost: "its device went away",
  agent_stopped: "its agent was stopped",
  agent_lost: "its agent was lost",
  appium_exited: "the Appium server on the device host exited",
  queue_timeout: "no matching device was free before its queue timeout",
  session_not_created: "the session could not be created",
};

/** "the client ended it (DELETE)" for `deleted`; an end this page does not know is said as its code. */
export const endReasonWords = (reason: string) => endReasons[reason] ?? reason;

/** The status the end alone gives: passed after DELETE, cancelled on cancel, errored any other way. */
function statusOfEnd(reason: string): ExecutionStatus {
  if (reason === "deleted") return "passed";
  if (reason === "cancelled") return "cancelled";
  return "errored";
}

export interface SessionOutcome {
  /** The end's code (`deleted`, `idle_timeout`, …), null while the session runs or waits. */
  endReason: string | null;
  /** The client marked the session passed or failed itself. */
  setByClient: boolean;
  /** One sentence for the page's header; null while it runs. */
  sentence: string | null;
}

export function sessionOutcome(session: Pick<Execution, "status" | "devices">): SessionOutcome {
  const endReason = session.devices[0]?.reason ?? null;
  const { status } = session;
  if (status === "queued" || status === "running" || endReason === null) {
    return { endReason: null, setByClient: false, sentence: null };
  }
  const setByClient = (status === "passed" || status === "failed") && status !== statusOfEnd(endReason);
  // A session Appium refused says why in its step's message ("session not created: …", appium-job.ts).
  const detail = endReason === "session_not_created" ? session.devices[0]?.steps[0]?.message : undefined;
  const ended = `The session ended because ${endReasonWords(endReason)}${detail ? ` (${detail})` : ""}`;
  const sentence = setByClient
    ? `Marked ${status} by the client (setSessionStatus or the result call). ${ended}.`
    : `${ended}.`;
  return { endReason, setByClient, sentence };
}
