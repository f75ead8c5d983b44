/**
 * One Appium session's life on the agent (docs/appium-relay.md, steps 2–4): its own Appium server, the Appium
 * session created on it, the relay of the client's commands one at a time in the order they arrived, the command
 * log, and the end: a relayed `DELETE`, the idle timeout (counted here, since the agent sees every command), the
 * maximum duration, or the caller's `end(reason)` (cancel, shutdown, a lost device). After the end, every command
 * is answered `404 invalid session id` with a message that says why, as API.md §12 requires.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type AppiumAnswer, appiumRequest } from "./appium-http.ts";
import { type AppiumServer, type AppiumServerSpec, startAppiumServer } from "./appium-server.ts";
import { CommandLog } from "./command-log.ts";
import type { NewSessionPayload } from "./session-capabilities.ts";
import { SessionNotCreatedError, w3cError } from "./w3c-error.ts";

/** The artifacts' names (API.md §12): the session's Appium log and its command log. */
export const APPIUM_LOG_NAME = "appium.log";
export const COMMAND_LOG_NAME = "commands.jsonl";

export type SessionEndReason =
  /** The client sent `DELETE /session/{id}`. */
  | "deleted"
  | "idle_timeout"
  | "max_duration"
  | "cancelled"
  | "device_lost"
  /** The agent stopped (SIGTERM) or lost its lease on the run. */
  | "agent_stopped"
  /** Appium's process ended by itself in the middle of the session. */
  | "appium_exited";

/** A WebDriver command as the channel relays it (docs/appium-relay.md, "The channel"). */
export interface RelayedCommand {
  method: string;
  /** Below `/session/{id}`: `/element`, `/source`; `""` for the session itself (`DELETE`). */
  path: string;
  /** Absent for GET and DELETE. */
  body?: unknown;
}

export interface SessionEnd {
  reason: SessionEndReason;
  /** Absolute paths of `appium.log` and `commands.jsonl`, complete on disk. */
  files: string[];
}

export interface AppiumSessionSpec {
  /** How to run Appium (executable, environment with APPIUM_HOME, timeouts); port and log are the session's. */
  appium: Omit<AppiumServerSpec, "port" | "logFile">;
  /** Appium's port: the session's port block's `appiumPort`. */
  port: number;
  /** Where `appium.log` and `commands.jsonl` are written (created if missing). */
  dir: string;
  payload: NewSessionPayload;
  /** `idle_timeout_seconds` in ms: without a command for this long, the session ends (`idle_timeout`). */
  idleTimeoutMs: number;
  /** `max_duration_seconds` in ms, counted from the session's creation (`max_duration`). */
  maxDurationMs: number;
  /** How long Appium may take to create the session (default 5 minutes: a real device's driver installs helpers). */
  newSessionTimeoutMs?: number;
  /** Aborting it while the session is being created stops Appium and fails the creation. */
  signal?: AbortSignal;
}

const DEFAULT_NEW_SESSION_TIMEOUT_MS = 5 * 60_000;
/** Deleting the Appium session at the end is a courtesy to its driver (it cleans up the device); bounded. */
const DELETE_AT_END_TIMEOUT_MS = 30_000;

const endedBecause: Record<SessionEndReason, string> = {
  deleted: "the client deleted it",
  idle_timeout: "no command came within its idle timeout (testbay:options.idle_timeout_seconds)",
  max_duration: "it reached its maximum duration (testbay:options.max_duration_seconds)",
  cancelled: "it was cancelled",
  device_lost: "its device was lost",
  agent_stopped: "the agent holding its device stopped",
  appium_exited: "the Appium server on the agent exited",
};

/** The message of the `invalid session id` answer after the end. */
export function endedMessage(reason: SessionEndReason): string {
  return `The session has ended (${reason}): ${endedBecause[reason]}.`;
}

/** WebDriver paths below a session: `""`, or `/segment/…` without `.`/`..` segments, query or fragment. */
function isSessionPath(path: string): boolean {
  if (path === "") return true;
  if (!path.startsWith("/") || /[?#\\]/.test(path)) return false;
  return path
    .slice(1)
    .split("/")
    .every((segment) => segment !== "." && segment !== ".." && !/%2e%2e|%2f/i.test(segment));
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise((resolve, reject) => {
    const onAbort = () =>
      reject(new SessionNotCreatedError("the session was cancelled while it was being created"));
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export class AppiumSession {
  /** Resolves when the session has ended and its files are complete. */
  readonly ended: Promise<SessionEnd>;
  private resolveEnded!: (end: SessionEnd) => void;
  private endReason: SessionEndReason | null = null;
  private ending: Promise<SessionEnd> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly maxTimer: NodeJS.Timeout;
  private appiumSessionDeleted = false;
  private readonly commandLog: CommandLog;

  private constructor(
    private readonly server: AppiumServer,
    /** Appium's own session ID (the client knows only Testbay's). */
    readonly appiumSessionId: string,
    /** The capabilities Appium answered the new session with. */
    readonly capabilities: Record<string, unknown>,
    private readonly spec: AppiumSessionSpec,
  ) {
    this.ended = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
    this.commandLog = new CommandLog(join(spec.dir, COMMAND_LOG_NAME));
    this.maxTimer = setTimeout(() => void this.end("max_duration"), spec.maxDurationMs);
    this.armIdleTimer();
    void server.exited.then(() => {
      if (!this.endReason) void this.end("appium_exited");
    });
  }

  /**
   * Starts Appium and creates the session on it. Throws SessionNotCreatedError, with Appium's own error and
   * message when Appium refused the capabilities, after stopping Appium; `appium.log` in `dir` says more.
   */
  static async start(spec: AppiumSessionSpec): Promise<AppiumSession> {
    await mkdir(spec.dir, { recursive: true });
    if (spec.signal?.aborted) throw new SessionNotCreatedError("the session was cancelled before it started");
    let server: AppiumServer;
    const starting = startAppiumServer({
      ...spec.appium,
      port: spec.port,
      logFile: join(spec.dir, APPIUM_LOG_NAME),
    });
    try {
      server = await raceAbort(starting, spec.signal);
    } catch (error) {
      // Cancelled while Appium was starting: it is stopped as soon as it is up.
      starting.then(
        (started) => started.stop(),
        () => undefined,
      );
      if (error instanceof SessionNotCreatedError) throw error;
      throw new SessionNotCreatedError(`Appium did not start on the agent: ${(error as Error).message}`);
    }
    try {
      const answer = await raceAbort(
        appiumRequest(
          spec.port,
          "POST",
          "/session",
          spec.payload,
          spec.newSessionTimeoutMs ?? DEFAULT_NEW_SESSION_TIMEOUT_MS,
        ),
        spec.signal,
      );
      const value = (answer.body as { value?: Record<string, unknown> } | null)?.value;
      const sessionId = value?.sessionId;
      if (answer.status !== 200 || typeof sessionId !== "string") {
        const error = typeof value?.error === "string" ? value.error : "session not created";
        const message =
          typeof value?.message === "string" ? value.message : `Appium answered ${answer.status}`;
        throw new SessionNotCreatedError(message, error);
      }
      const capabilities = (value?.capabilities ?? {}) as Record<string, unknown>;
      return new AppiumSession(server, sessionId, capabilities, spec);
    } catch (error) {
      await server.stop();
      if (error instanceof SessionNotCreatedError) throw error;
      throw new SessionNotCreatedError(`Appium did not create the session: ${(error as Error).message}`);
    }
  }

  /** Why the session ended, or null while it runs. */
  get reason(): SessionEndReason | null {
    return this.endReason;
  }

  /** The Appium server's process ID (its process group's too). */
  get appiumPid(): number {
    return this.server.pid;
  }

  /** The Appium server's URL (for the agent's own use and tests; clients never see it). */
  get appiumUrl(): string {
    return this.server.url;
  }

  /**
   * Relays one command to Appium and resolves with Appium's status and parsed body, unchanged. Commands are
   * sent one at a time, in the order relay was called. Never rejects: what the agent cannot relay is answered
   * with a W3C error body.
   */
  relay(command: RelayedCommand): Promise<AppiumAnswer> {
    const arrivedAt = new Date();
    if (this.endReason) return Promise.resolve(w3cError("invalid session id", endedMessage(this.endReason)));
    if (!isSessionPath(command.path)) {
      return Promise.resolve(
        w3cError("unknown command", `${command.method} ${command.path} is not a WebDriver command path`),
      );
    }
    this.inFlight++;
    this.clearIdleTimer();
    const answered = this.queue.then(() => this.send(command, arrivedAt));
    this.queue = answered;
    return answered;
  }

  private async send(command: RelayedCommand, arrivedAt: Date): Promise<AppiumAnswer> {
    try {
      // Ended while it waited behind the commands before it.
      if (this.endReason) return w3cError("invalid session id", endedMessage(this.endReason));
      const method = command.method.toUpperCase();
      const body = method === "POST" ? (command.body ?? {}) : undefined;
      const started = performance.now();
      let answer: AppiumAnswer;
      try {
        answer = await appiumRequest(
          this.spec.port,
          method,
          `/session/${this.appiumSessionId}${command.path}`,
          body,
        );
      } catch (error) {
        answer = this.endReason
          ? w3cError("invalid session id", endedMessage(this.endReason))
          : w3cError("unknown error", `Appium on the agent did not answer: ${(error as Error).message}`);
      }
      const ms = Math.round((performance.now() - started) * 10) / 10;
      this.commandLog.append({
        at: arrivedAt.toISOString(),
        method,
        path: command.path,
        status: answer.status,
        ms,
      });
      if (method === "DELETE" && command.path === "") {
        // Appium has deleted its session (or refused to, which changes nothing: the client is done with it).
        this.appiumSessionDeleted = true;
        void this.end("deleted");
      }
      return answer;
    } finally {
      this.inFlight--;
      this.armIdleTimer();
    }
  }

  /** Idleness counts from the last answer: a long command (an implicit wait) is not idleness. */
  private armIdleTimer(): void {
    if (this.endReason || this.inFlight > 0) return;
    this.clearIdleTimer();
    this.idleTimer = setTimeout(() => void this.end("idle_timeout"), this.spec.idleTimeoutMs);
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /**
   * Ends the session (once; later calls get the same result): deletes the Appium session unless a relayed
   * DELETE did, stops Appium, closes the command log. Commands waiting in the queue are answered `invalid
   * session id`; one Appium is still working on is cut short when Appium stops.
   */
  end(reason: SessionEndReason): Promise<SessionEnd> {
    if (this.ending) return this.ending;
    this.endReason = reason;
    this.clearIdleTimer();
    clearTimeout(this.maxTimer);
    this.ending = (async () => {
      if (!this.appiumSessionDeleted && !this.server.hasExited) {
        this.appiumSessionDeleted = true;
        await appiumRequest(
          this.spec.port,
          "DELETE",
          `/session/${this.appiumSessionId}`,
          undefined,
          DELETE_AT_END_TIMEOUT_MS,
        ).catch(() => undefined);
      }
      await this.server.stop();
      await this.commandLog.close();
      const end = { reason, files: [this.server.logFile, this.commandLog.file] };
      this.resolveEnded(end);
      return end;
    })();
    return this.ending;
  }
}
