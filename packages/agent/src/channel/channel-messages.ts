/**
 * The frames of the agent's channel to the server (docs/appium-relay.md, "The channel"): JSON text, one message
 * a frame. The server's side has the same shapes (packages/server/src/features/sessions/channel/channel-messages.ts).
 */

/** A WebDriver command of a session: `path` is below `/session/{id}` (`""` for the session itself). */
export interface ChannelCommand {
  /** Testbay's session ID (the execution's); the agent maps it to Appium's own session ID. */
  session: string;
  method: string;
  path: string;
  /** The parsed JSON body; absent for GET and DELETE. */
  body?: unknown;
  /**
   * Set on the server's own `DELETE` of a session it cancelled (`POST /v1/executions/{id}/cancel`): the agent
   * ends the session for this reason at once instead of relaying the DELETE to Appium as the client's.
   */
  end?: "cancelled";
}

/** Appium's answer, unchanged: its status and parsed JSON body (or the W3C error the agent gives). */
export interface ChannelAnswer {
  status: number;
  body: unknown;
}

export interface CommandFrame extends ChannelCommand {
  type: "command";
  id: string;
}

/** The command frame the server sent, or undefined for anything else. */
export function readCommandFrame(text: string): CommandFrame | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof frame !== "object" || frame === null) return undefined;
  const f = frame as Record<string, unknown>;
  if (
    f.type !== "command" ||
    typeof f.id !== "string" ||
    typeof f.session !== "string" ||
    typeof f.method !== "string" ||
    typeof f.path !== "string"
  ) {
    return undefined;
  }
  return {
    type: "command",
    id: f.id,
    session: f.session,
    method: f.method,
    path: f.path,
    ...("body" in f ? { body: f.body } : {}),
    ...(f.end === "cancelled" ? { end: "cancelled" as const } : {}),
  };
}

/** The W3C error body (https://w3c.github.io/webdriver/#errors) for a command the agent could not relay. */
export function unknownErrorAnswer(message: string): ChannelAnswer {
  return { status: 500, body: { value: { error: "unknown error", message, stacktrace: "" } } };
}
