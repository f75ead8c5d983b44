import type { RelayedCommand } from "./channel/index.ts";

/** What a client said of its session through the script, as `POST /v1/executions/{id}/result` takes it. */
export interface SessionStatus {
  status: "passed" | "failed";
  reason: string | null;
}

const prefix = "testbay:";
// As POST /v1/executions/{id}/result takes it (executions/session-result.routes.ts).
const maxReasonLength = 2000;

/**
 * Reads `driver.executeScript('testbay: {"action": "setSessionStatus", "status": "failed", "reason": "…"}', [])`
 * (API.md §12), the way hosted device farms let a test mark its session from inside the WebDriver client.
 * Testbay answers it itself; Appium never sees it. `undefined`: not such a script (relay it as it is);
 * `{refused}`: ours but malformed, answered with W3C's `invalid argument` and what to write instead.
 */
export function readSessionStatusScript(
  command: Pick<RelayedCommand, "method" | "path" | "body">,
): SessionStatus | { refused: string } | undefined {
  if (command.method !== "POST" || command.path !== "/execute/sync") return undefined;
  const script = (command.body as { script?: unknown } | undefined)?.script;
  if (typeof script !== "string" || !script.trimStart().startsWith(prefix)) return undefined;
  const example = `testbay: {"action": "setSessionStatus", "status": "passed" or "failed", "reason": "…"}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(script.trimStart().slice(prefix.length));
  } catch {
    return { refused: `The testbay: script is not JSON after "testbay:". Write ${example}.` };
  }
  const { action, status, reason } = (parsed ?? {}) as Record<string, unknown>;
  if (action !== "setSessionStatus") {
    return { refused: `Testbay knows one script action, setSessionStatus. Write ${example}.` };
  }
  if (status !== "passed" && status !== "failed") {
    return { refused: `setSessionStatus takes status "passed" or "failed". Write ${example}.` };
  }
  if (
    reason !== undefined &&
    reason !== null &&
    (typeof reason !== "string" || reason.length > maxReasonLength)
  ) {
    return { refused: `setSessionStatus takes a reason of at most ${maxReasonLength} characters, as text.` };
  }
  return { status, reason: typeof reason === "string" ? reason : null };
}
