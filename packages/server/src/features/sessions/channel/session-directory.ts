import type { AgentAddress } from "./channel-messages.ts";
import type { WebDriverCaller } from "./webdriver-caller.ts";

/** Where a session's commands go, or why it is over. */
export type SessionWhereabouts = AgentAddress | { ended: string };

/**
 * Finds the session a WebDriver command addresses. The real one reads the sessions table
 * (features/sessions/session-directory.ts); tests use a map. `caller` is who the command claims to come from
 * (webdriver-caller.ts), when it carries credentials: a command carrying another client's credentials, or for
 * another organization's session, is an unknown session (API.md §12).
 */
export interface SessionDirectory {
  /**
   * The agent holding the session's device; `{ended}` with the reason for a session that is over (its
   * `invalid session id` message); undefined for an unknown session (or another client's).
   */
  find(sessionId: string, caller: WebDriverCaller): Promise<SessionWhereabouts | undefined>;
  /** The session ended, or its agent does not know it: the next find reads it afresh. */
  forget(sessionId: string): void;
}
