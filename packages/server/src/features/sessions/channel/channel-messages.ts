/**
 * The frames of an agent's channel (docs/appium-relay.md, "The channel"): JSON text, one message a frame.
 * The agent's side has the same shapes (packages/agent/src/channel/channel-messages.ts).
 */

/** Which agent: agent IDs are chosen by the agents and unique within an organization (agents table). */
export interface AgentAddress {
  organizationId: string;
  agentId: string;
}

/** A WebDriver command of a session, as relayed: `path` is below `/session/{id}` (`""` for the session itself). */
export interface RelayedCommand {
  /** Testbay's session ID (the execution's). */
  session: string;
  method: string;
  path: string;
  /** The parsed JSON body; absent for GET and DELETE. */
  body?: unknown;
  /**
   * Only on the server's own `DELETE` of a session it cancelled (sessions.feature.ts): the agent ends the
   * session for this reason instead of relaying a client's DELETE to Appium.
   */
  end?: "cancelled";
}

/** Appium's answer, unchanged: its status and its parsed JSON body. */
export interface RelayedAnswer {
  status: number;
  body: unknown;
}

export interface CommandFrame extends RelayedCommand {
  type: "command";
  id: string;
}

export interface AnswerFrame extends RelayedAnswer {
  type: "answer";
  id: string;
}

export interface EndedFrame {
  type: "ended";
  session: string;
  reason: string;
}

export type AgentFrame = AnswerFrame | EndedFrame;

/** The frame an agent sent, or undefined for anything else (logged and ignored, never fatal). */
export function readAgentFrame(text: string): AgentFrame | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof frame !== "object" || frame === null) return undefined;
  const f = frame as Record<string, unknown>;
  if (f.type === "answer" && typeof f.id === "string" && Number.isInteger(f.status) && "body" in f) {
    return { type: "answer", id: f.id, status: f.status as number, body: f.body };
  }
  if (f.type === "ended" && typeof f.session === "string" && typeof f.reason === "string") {
    return { type: "ended", session: f.session, reason: f.reason };
  }
  return undefined;
}

/** The key of an agent in maps and in Redis: organization and agent ID, which alone is unique per organization only. */
export function agentKey(agent: AgentAddress): string {
  return `${agent.organizationId}/${agent.agentId}`;
}
