import { LRUCache } from "lru-cache";
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

/** A running session's route, as read from the database: none of it changes while the session runs. */
interface Route {
  organizationId: string;
  agentId: string;
  clientId: string;
}

/**
 * How long a running session's route is used without reading the database again. A session ends in two kinds
 * of ways. Ends its agent knows (DELETE, idle timeout, maximum duration, a lost device, and a cancel, which the
 * server sends down the channel before answering it: sessions.feature.ts) are answered by the agent itself
 * from the first command after them (packages/agent/src/appium/session-registry.ts), cached route or not.
 * Ends only the server sees (the agent lost, its lease lapsed) reach a command at most this late.
 *
 * Why cache at all: API.md §12 allows a relayed command 1 ms (2 ms forwarded) over calling Appium directly,
 * and this read costs about 0.2 ms on SQLite and 0.9 ms on PostgreSQL per command on this project's machines
 * (`npm run bench -- appium`, docs/appium-relay.md "Speed"), most of the budget; a client sends several
 * commands a second, so nearly all of them find the route here.
 */
export const routeTtlMs = 1000;

/**
 * Finds sessions for the command routes (`/wd/hub/session/{id}/…`, features/sessions/channel/) from the
 * database, so any instance answers for any session (docs/appium-relay.md, "Several instances"); a running
 * session's route is kept for routeTtlMs (see there).
 *
 * `undefined` is an unknown session (`404 invalid session id` without more): no such session, one bound to
 * another client than the credentials the command carries (API.md §12: indistinguishable from an unknown one),
 * or one that is not ready yet (its ID has not been handed out). `{ended}` says why a session no longer takes
 * commands, for the `invalid session id` message.
 */
export class SessionDirectory {
  private readonly routes = new LRUCache<string, Route>({ max: 10_000, ttl: routeTtlMs });

  constructor(private readonly sessions: SessionsRepo) {}

  async find(sessionId: string, caller: CommandCaller): Promise<SessionLocation | undefined> {
    const route = this.routes.get(sessionId);
    if (route) return this.located(route, caller);
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
    // Cancelled (POST /v1/executions/{id}/cancel) while the agent could not be told (sessions.feature.ts).
    if (session.cancelRequested) return { ended: "cancelled" };
    if (session.agentId === null) return { ended: "agent_lost" };
    const running = {
      organizationId: session.organizationId,
      agentId: session.agentId,
      clientId: session.clientId,
    };
    this.routes.set(sessionId, running);
    return this.located(running, caller);
  }

  /** Reads the session from the database at its next command: it ended, or its agent said it is unknown there. */
  forget(sessionId: string): void {
    this.routes.delete(sessionId);
  }

  /** The agent is lost: its sessions' commands read why from the database. */
  forgetAgent(agent: { organizationId: string; agentId: string }): void {
    for (const [sessionId, route] of this.routes.entries()) {
      if (route.organizationId === agent.organizationId && route.agentId === agent.agentId) {
        this.routes.delete(sessionId);
      }
    }
  }

  private located(route: Route, caller: CommandCaller): SessionLocation | undefined {
    if (caller.clientId !== undefined && caller.clientId !== route.clientId) return undefined;
    return { organizationId: route.organizationId, agentId: route.agentId };
  }
}
