/**
 * Why a session (API.md §12) came out as it did, in words: how it ended (its device run's `reason`, the agent's
 * end reason, docs/appium.md "How a session ends") and the verdict its client set (`client_result`: through
 * setSessionStatus or POST /v1/executions/{id}/result), with the client's reason.
 */
import type { Execution } from "../../api/types.ts";

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

export interface SessionOutcome {
  /** The end's code (`deleted`, `idle_timeout`, …), null while the session runs or waits. */
  endReason: string | null;
  /** The client marked the session passed or failed itself. */
  setByClient: boolean;
  /** One sentence for the page's header; null while it runs. */
  sentence: string | null;
}

export function sessionOutcome(
  session: Pick<Execution, "status" | "devices"> & Partial<Pick<Execution, "client_result">>,
): SessionOutcome {
  const endReason = session.devices[0]?.reason ?? null;
  const { status } = session;
  if (status === "queued" || status === "running" || endReason === null) {
    return { endReason: null, setByClient: false, sentence: null };
  }
  const verdict = session.client_result ?? null;
  // A session Appium refused says why in its step's message ("session not created: …", appium-job.ts).
  const detail = endReason === "session_not_created" ? session.devices[0]?.steps[0]?.message : undefined;
  const ended = `The session ended because ${endReasonWords(endReason)}${detail ? ` (${detail})` : ""}`;
  if (!verdict) return { endReason, setByClient: false, sentence: `${ended}.` };
  const why = verdict.reason ? `: “${verdict.reason}”` : "";
  return {
    endReason,
    setByClient: true,
    sentence: `Marked ${verdict.status} by the client${why}. ${ended}.`,
  };
}
