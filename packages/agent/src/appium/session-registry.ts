/**
 * The agent's running Appium sessions by Testbay's session ID (the execution's), for the channel's one command
 * handler (packages/agent/src/channel/channel-client.ts `handle`): a command goes to its session's relay
 * (appium-session.ts), and one for a session the agent does not hold is answered `404 invalid session id`, with
 * the reason when the session ended here a short while ago (API.md §12: the next command says which end it was).
 * A cancel comes the same way, as the server's own end command (channel-messages.ts `end`), so it is ordered
 * with the session's commands: those sent after the cancel was answered find the session ended.
 */
import type { AppiumAnswer } from "./appium-http.ts";
import { endedMessage, type RelayedCommand, type SessionEndReason } from "./appium-session.ts";
import { w3cError } from "./w3c-error.ts";

/** A command as the channel hands it over: the session it is for, and the command. */
export interface SessionCommand extends RelayedCommand {
  session: string;
  /** The server ends the session for this reason (a cancel) rather than relaying a command. */
  end?: "cancelled";
}

/** A live session as the registry serves it: its relay (appium-session.ts `relay`) and its end. */
export interface ServedSession {
  relay(command: RelayedCommand): Promise<AppiumAnswer>;
  end(reason: SessionEndReason): void;
}

/** Ended sessions remembered for their reason; older ones get the plain answer (the server knows them too). */
const REMEMBERED_ENDS = 1000;

export class AppiumSessionRegistry {
  private readonly live = new Map<string, ServedSession>();
  private readonly ends = new Map<string, SessionEndReason>();

  /**
   * Serves a session's commands until the returned function is called with how the session ended (null: it
   * never started, nothing to remember).
   */
  serve(sessionId: string, session: ServedSession): (reason: SessionEndReason | null) => void {
    this.live.set(sessionId, session);
    return (reason) => {
      if (this.live.get(sessionId) !== session) return;
      this.live.delete(sessionId);
      if (reason) this.remember(sessionId, reason);
    };
  }

  /** The IDs of the sessions served now. */
  sessions(): string[] {
    return [...this.live.keys()];
  }

  handle(command: SessionCommand): Promise<AppiumAnswer> {
    const session = this.live.get(command.session);
    if (session && command.end) {
      // Ended before the answer goes back: the session's next command is already refused (appium-session.ts).
      session.end(command.end);
      return Promise.resolve({ status: 200, body: { value: null } });
    }
    if (session) return session.relay({ method: command.method, path: command.path, body: command.body });
    const reason = this.ends.get(command.session);
    return Promise.resolve(
      w3cError(
        "invalid session id",
        reason ? endedMessage(reason) : `No session ${command.session} on this agent.`,
      ),
    );
  }

  private remember(sessionId: string, reason: SessionEndReason): void {
    this.ends.delete(sessionId);
    this.ends.set(sessionId, reason);
    for (const oldest of this.ends.keys()) {
      if (this.ends.size <= REMEMBERED_ENDS) break;
      this.ends.delete(oldest);
    }
  }
}
