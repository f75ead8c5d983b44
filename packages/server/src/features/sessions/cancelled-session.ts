import { setTimeout as delay } from "node:timers/promises";
import type { Relay } from "./channel/index.ts";
import type { SessionDirectory } from "./session-directory.ts";
import type { SessionsRepo } from "./sessions.repo.ts";

/** How long a cancel waits for the agent to say it ended the session (its channel may be reconnecting). */
const toldWithinMs = 3000;

/**
 * Ends a cancelled session on its agent before the cancel is answered (API.md §12: the next command says it was
 * cancelled). The server's own end command goes down the session's channel after the commands sent before it,
 * so the agent refuses every later one itself (packages/agent/src/appium/session-registry.ts), whichever
 * instance relays it and whatever route it has cached (session-directory.ts). An agent that cannot be told
 * within toldWithinMs gets the end first when its channel is back, and hears of the cancel at its heartbeat.
 */
export async function endCancelledSession(
  parts: {
    sessions: SessionsRepo;
    directory: SessionDirectory;
    relay: Relay;
    log: { warn(object: object, message: string): void };
  },
  organizationId: string,
  executionId: string,
): Promise<void> {
  try {
    const session = await parts.sessions.whereabouts(executionId);
    if (session?.state !== "ready" || session.agentId === null || session.organizationId !== organizationId) {
      return;
    }
    parts.directory.forget(executionId);
    const agent = { organizationId, agentId: session.agentId };
    const end = { session: executionId, method: "DELETE", path: "", end: "cancelled" as const };
    const waited = new AbortController();
    await Promise.race([
      parts.relay.send(agent, end),
      delay(toldWithinMs, undefined, { signal: waited.signal }).catch(() => {}),
    ]);
    waited.abort();
  } catch (error) {
    parts.log.warn({ err: error, session: executionId }, "could not tell the agent of a cancelled session");
  }
}
