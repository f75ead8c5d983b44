/**
 * The `appium` step: a session's device run on the agent, from the claimed job to the session's end
 * (docs/appium-relay.md, steps 2–4). The job's `plan.steps[0]` is `{type: "appium", capabilities, options}`
 * (the server made it from the client's new-session request); the app, when the session names a version, was
 * installed by the caller as for any device step, and its local file comes in as `installedAppPath`.
 *
 * What reaches the server is injected (`reportReady`: `POST /v1/agent/jobs/{lease}/session`; `serveCommands`:
 * the agent's channel; `onEnded`: the channel's `ended` message), so this runs, and is tested, without them.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type ResolveAll, resolvedHostRefusal, systemResolveAll } from "./app-url-guard.ts";
import type { AppiumAnswer } from "./appium-http.ts";
import type { AppiumServerSpec } from "./appium-server.ts";
import {
  APPIUM_LOG_NAME,
  AppiumSession,
  type RelayedCommand,
  type SessionEnd,
  type SessionEndReason,
} from "./appium-session.ts";
import type { PortBlocks } from "./port-blocks.ts";
import {
  buildSessionCapabilities,
  privateAppUrlRefusal,
  type SessionDevice,
} from "./session-capabilities.ts";
import type { ServedSession } from "./session-registry.ts";
import { SessionNotCreatedError } from "./w3c-error.ts";

/** `testbay:options` the agent acts on (API.md §12); the server fills in the defaults. */
export interface AppiumStepOptions {
  idle_timeout_seconds?: number;
  max_duration_seconds?: number;
  /** Recording is the caller's (as for other device steps); carried here for it. */
  record_video?: boolean;
}

export interface AppiumStep {
  type: "appium";
  /** The client's capabilities, merged (`alwaysMatch` × `firstMatch`) by the server into one object. */
  capabilities: Record<string, unknown>;
  options?: AppiumStepOptions;
}

/** How this agent offers Appium: `--appium [PATH]`, `--appium-allow-local-apps`, `--appium-allow-private-app-urls`, `--appium-ports`. */
export interface AppiumAgentOptions {
  /** The `appium` executable; null: `appium` on PATH. */
  executable: string | null;
  allowLocalApps: boolean;
  allowPrivateAppUrls: boolean;
  /** The agent's port range, shared by all its sessions. */
  portBlocks: PortBlocks;
  /** Appium's environment (APPIUM_HOME says where its drivers are); default: the agent's. */
  env?: NodeJS.ProcessEnv;
  startTimeoutMs?: AppiumServerSpec["startTimeoutMs"];
  stopGraceMs?: AppiumServerSpec["stopGraceMs"];
  /** Name lookup for app URLs (tests inject one; there is no DNS on the test machines). */
  resolveAll?: ResolveAll;
}

/**
 * The body of `POST /v1/agent/jobs/{lease}/session`: the SDK's SessionReport (packages/client/src/sdk/agent-api.ts,
 * not exported from @testbay/client's index), spelled out here with the same shape.
 */
export type SessionReadiness =
  | { status: "ready"; capabilities: Record<string, unknown> }
  | { status: "failed"; error: string; message: string };

/** The server's answer to the report (the SDK's SessionReportResult): the session's state once it was taken. */
export interface ReadinessAnswer {
  state: string;
}

export type Relay = (command: RelayedCommand) => Promise<AppiumAnswer>;

export interface AppiumStepIo {
  /**
   * Tells the server the session is ready (Appium's capabilities) or failed (`agent.reportSession`). When the
   * answer's state is not `ready` after a ready report, the session ended on the server meanwhile (the client
   * hung up, a cancel): the agent ends it too.
   */
  reportReady(result: SessionReadiness): Promise<ReadinessAnswer | undefined>;
  /**
   * Hands the session (its relay and its end, for a cancel the server sends down the channel) to what delivers
   * commands (session-registry.ts behind the agent's channel); returns how to take it back, called with how the
   * session ended.
   */
  serveCommands(session: ServedSession): (reason: SessionEndReason) => void;
  /** The agent ended the session on its own (idle timeout, max duration, Appium gone): the channel says so. */
  onEnded?(reason: SessionEndReason): void;
  /**
   * Aborted on cancel, shutdown, plan timeout or a lost lease; its reason (job-runner.ts's StopReason:
   * "cancelled", "shutdown", "timeout", "lease_lost", or a SessionEndReason such as "device_lost") says which.
   */
  signal: AbortSignal;
  log(line: string): void;
}

export interface AppiumStepRun {
  step: AppiumStep;
  device: SessionDevice | null;
  /** The installed version's local file when the session names a version; else null. */
  installedAppPath: string | null;
  /** Where the session's files go (the job's artifacts directory): `appium.log`, `commands.jsonl`. */
  dir: string;
  agent: AppiumAgentOptions;
}

export interface AppiumStepResult {
  /** Why the session ended; null when it was never created. */
  reason: SessionEndReason | null;
  /** Files to upload as artifacts (the Appium log even when the session could not be created). */
  files: string[];
  /**
   * The device run's outcome (API.md §12): passed after the client's DELETE, cancelled on cancel, errored
   * otherwise (the server applies the client's own setSessionStatus on top).
   */
  outcome: { status: "passed" | "cancelled" | "errored"; message: string | null };
}

const DEFAULT_IDLE_TIMEOUT_SECONDS = 90;
const DEFAULT_MAX_DURATION_SECONDS = 1800;

/** The session's end for an abort of the job's signal. */
export function endReasonForAbort(reason: unknown): SessionEndReason {
  switch (reason) {
    case "cancelled":
      return "cancelled";
    case "timeout":
      return "max_duration";
    case "device_lost":
      return "device_lost";
    default:
      return "agent_stopped";
  }
}

function outcomeOf(end: SessionEnd): AppiumStepResult["outcome"] {
  if (end.reason === "deleted") return { status: "passed", message: null };
  if (end.reason === "cancelled") return { status: "cancelled", message: "the session was cancelled" };
  return { status: "errored", message: `the session ended: ${end.reason}` };
}

/** Runs one session to its end; never rejects for what a session may meet (refused capabilities, Appium failing). */
export async function runAppiumStep(run: AppiumStepRun, io: AppiumStepIo): Promise<AppiumStepResult> {
  const appiumLog = join(run.dir, APPIUM_LOG_NAME);
  const fail = async (error: string, message: string, files: string[]): Promise<AppiumStepResult> => {
    io.log(`appium session not created: ${message}`);
    await io.reportReady({ status: "failed", error, message }).catch((reportError: Error) => {
      io.log(`could not report the session failed: ${reportError.message}`);
    });
    return {
      reason: null,
      files,
      outcome: { status: "errored", message: `session not created: ${message}` },
    };
  };
  if (!run.device)
    return fail("session not created", "an Appium session needs a device; the job has none", []);

  let release: (() => void) | null = null;
  try {
    const built = buildSessionCapabilities({
      requested: run.step.capabilities,
      device: run.device,
      ports: { driverPort: 0, mjpegServerPort: 0, proxyPort: 0 },
      installedAppPath: run.installedAppPath,
      allowLocalApps: run.agent.allowLocalApps,
      allowPrivateAppUrls: run.agent.allowPrivateAppUrls,
    });
    if (built.appUrl && !run.agent.allowPrivateAppUrls) {
      const refusal = await resolvedHostRefusal(built.appUrl, run.agent.resolveAll ?? systemResolveAll);
      if (refusal) throw privateAppUrlRefusal(built.appUrl, refusal);
    }
    const block = await run.agent.portBlocks.reserve();
    release = block.release;
    // Built again with the block's ports: the first build only checked what could be refused before reserving.
    const { payload, overridden } = buildSessionCapabilities({
      requested: run.step.capabilities,
      device: run.device,
      ports: block,
      installedAppPath: run.installedAppPath,
      allowLocalApps: run.agent.allowLocalApps,
      allowPrivateAppUrls: run.agent.allowPrivateAppUrls,
    });
    if (overridden.length > 0)
      io.log(`capabilities set by Testbay instead of the client's: ${overridden.join(", ")}`);
    const options = run.step.options ?? {};
    const session = await AppiumSession.start({
      appium: {
        executable: run.agent.executable,
        env: run.agent.env,
        startTimeoutMs: run.agent.startTimeoutMs,
        stopGraceMs: run.agent.stopGraceMs,
      },
      port: block.appiumPort,
      dir: run.dir,
      payload,
      idleTimeoutMs: (options.idle_timeout_seconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS) * 1000,
      maxDurationMs: (options.max_duration_seconds ?? DEFAULT_MAX_DURATION_SECONDS) * 1000,
      signal: io.signal,
    });
    const onAbort = () => void session.end(endReasonForAbort(io.signal.reason));
    io.signal.addEventListener("abort", onAbort, { once: true });
    // Aborted between the session's creation and now: no abort event comes any more.
    if (io.signal.aborted) onAbort();
    const detach = io.serveCommands({
      relay: (command) => session.relay(command),
      end: (reason) => void session.end(reason),
    });
    let endReason: SessionEndReason = "agent_stopped";
    try {
      io.log(`appium session ${session.appiumSessionId} ready on port ${block.appiumPort}`);
      const answer = await io.reportReady({ status: "ready", capabilities: session.capabilities });
      if (answer && answer.state !== "ready") {
        io.log(`the server has the session ${answer.state}: ending it`);
        void session.end("cancelled");
      }
      const end = await session.ended;
      endReason = end.reason;
      if (end.reason !== "deleted" && !io.signal.aborted) io.onEnded?.(end.reason);
      io.log(`appium session ended: ${end.reason}`);
      return { reason: end.reason, files: end.files, outcome: outcomeOf(end) };
    } catch (error) {
      // reportReady failed (the server unreachable): the client never got the session; end it.
      const end = await session.end("agent_stopped");
      io.log(`appium session ended: could not report it ready: ${(error as Error).message}`);
      return { reason: end.reason, files: end.files, outcome: outcomeOf(end) };
    } finally {
      detach(session.reason ?? endReason);
      io.signal.removeEventListener("abort", onAbort);
    }
  } catch (error) {
    // Appium's log says why it did not start or refused the capabilities: it is kept when Appium ran.
    const files = existsSync(appiumLog) ? [appiumLog] : [];
    if (error instanceof SessionNotCreatedError) return fail(error.error, error.message, files);
    return fail("session not created", (error as Error).message, files);
  } finally {
    release?.();
  }
}
