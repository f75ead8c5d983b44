import type { AgentAddress } from "./channel-messages.ts";
import type { WebDriverCaller } from "./webdriver-caller.ts";

/** Where a session's commands go, or why it is over. */
export type SessionWhereabouts = AgentAddress | { ended: string };

/**
 * Finds the session a WebDriver command addresses. The real one reads the sessions table (features/sessions,
 * built beside this relay for issue 27); tests use a map.
 *
 * TODO(issue 27, sessions table): `caller` is who the command claims to come from (webdriver-caller.ts), when it
 * carries credentials. API.md §12: a command carrying another client's credentials, or for another
 * organization's session, is an unknown session: the real directory answers undefined when `caller.clientId` is
 * set and is not the client the session is bound to. A command without credentials is the session's.
 */
export interface SessionDirectory {
  /**
   * The agent holding the session's device; `{ended}` with the reason for a session that is over (its
   * `invalid session id` message); undefined for an unknown session (or another client's).
   */
  find(sessionId: string, caller: WebDriverCaller): Promise<SessionWhereabouts | undefined>;
}
