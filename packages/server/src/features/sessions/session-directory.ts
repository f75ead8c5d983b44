import type { SessionsRepo } from "./sessions.repo.ts";

/**
 * Where a session's commands go: the agent holding it (by organization and ID, as the relay's channels are
 * keyed: channel/channel-messages.ts's AgentAddress), or why it has ended.
 */
export type SessionLocation = { organizationId: string; agentId: string } | { ended: string };

/** Who sends a command: the client its credentials name, when it sent any (WebDriver clients often do not). */
export interface CommandCaller {
  clientId?: string;
}

/**
 * Finds sessions for the command routes (`/wd/hub/session/{id}/…`, features/sessions/channel/). Reads the
 * database on every call, so any instance answers for any session (docs/appium-relay.md, "Several instances").
 *
 * `undefined` is an unknown session (`404 invalid session id` without more): no such session, one bound to
 * another client than the credentials the command carries (API.md §12: indistinguishable from an unknown one),
 * or one that is not ready yet (its ID has not been handed out). `{ended}` says why a session no longer takes
 * commands, for the `invalid session id` message.
 */
export class SessionDirectory {
  constructor(private readonly sessions: SessionsRepo) {}

  async find(sessionId: string, caller: CommandCaller): Promise<SessionLocation | undefined> {
    const session = await this.sessions.whereabouts(sessionId);
    if (!session) return undefined;
    if (caller.clientId !== undefined && caller.clientId !== session.clientId) return undefined;
    switch (session.state) {
      case "queued":
        return undefined;
      case "failed":
        return { ended: `the session was never created: ${session.message ?? "it failed to start"}` };
      case "ended":
        return { ended: session.endReason ?? "ended" };
      case "ready":
        break;
    }
    // Its device run ended before the session row heard of it (the agent completed it, or its lease lapsed).
    if (session.runStatus !== "running") return { ended: session.runReason ?? session.runStatus ?? "ended" };
    // Cancelled (POST /v1/executions/{id}/cancel): the agent stops at its next heartbeat; commands stop now.
    if (session.cancelRequested) return { ended: "cancelled" };
    if (session.agentId === null) return { ended: "agent_lost" };
    return { organizationId: session.organizationId, agentId: session.agentId };
  }
}
