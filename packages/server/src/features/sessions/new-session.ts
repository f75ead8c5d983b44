import { type Clock, isoTime } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { DeviceRuns } from "../device-runs/index.ts";
import type { ExecutionRecord, ExecutionsService } from "../executions/index.ts";
import { ciOf, emptySummary, queuedDeviceRun } from "../executions/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import type { VersionsService } from "../versions/index.ts";
import { readNewSession, type SessionRequest } from "./capabilities.ts";
import { sessionPlan } from "./session-plan.ts";
import { type SessionRecord, SessionsRepo } from "./sessions.repo.ts";
import { WebDriverError } from "./w3c-errors.ts";
import type { WebDriverCaller } from "./webdriver-authentication.ts";

export interface NewSessionOptions {
  executions: ExecutionsService;
  versions: VersionsService;
  sessions: SessionsRepo;
  runs: Pick<DeviceRuns, "endQueued">;
  /** Hears of every change of an organization's executions, from any instance (features/live). */
  changes: ExecutionChanges;
  /** Wakes the agents waiting in a claim for the organization's new work (features/agent). */
  notifyWork: (organizationId: string) => void;
  clock: Clock;
  /**
   * How often a waiting new session reads its row again without a wake-up: a change announced by another
   * process on one SQLite file reaches no listener here (PostgreSQL's notifications reach every instance).
   */
  pollIntervalMs: number;
}

/** The W3C new-session answer: Testbay's session ID (the execution's) and the capabilities. */
export interface NewSessionAnswer {
  value: { sessionId: string; capabilities: Record<string, unknown> };
}

/**
 * A new session (API.md §12; docs/appium-relay.md, "The path of a session" step 1): reads the capabilities,
 * queues an execution of kind `session` with one device run needing `appium`, and waits until the agent that
 * claims it reports the session ready or failed (POST /v1/agent/jobs/{lease_id}/session, through the database:
 * any instance may be the one waiting), or until the queue timeout ends it.
 */
export class NewSessions {
  constructor(private readonly options: NewSessionOptions) {}

  /**
   * `dashboardOrigin`: where people open the dashboard (`testbay:dashboard_url`). `abort`: the client went away;
   * the execution is then cancelled (a session nobody waits for would hold a device for nothing).
   */
  async create(
    caller: WebDriverCaller,
    body: unknown,
    dashboardOrigin: string,
    abort: AbortSignal,
  ): Promise<NewSessionAnswer> {
    const request = readNewSession(body);
    const execution = await this.newExecution(caller, request);
    await this.options.executions.repo.insertAll([execution], (trx) =>
      SessionsRepo.insert(trx, {
        executionId: execution.id,
        organizationId: caller.organizationId,
        clientId: caller.clientId,
        idleTimeoutSeconds: request.options.idleTimeoutSeconds,
        maxDurationSeconds: request.options.maxDurationSeconds,
        createdAt: execution.createdAt,
      }),
    );
    this.options.notifyWork(caller.organizationId);
    this.options.changes.changed(caller.organizationId, execution.id);

    const session = await this.waitForSession(caller.organizationId, execution.id, request, abort);
    return {
      value: {
        sessionId: execution.id,
        capabilities: {
          ...(session.capabilities ?? {}),
          "testbay:execution_id": execution.id,
          "testbay:dashboard_url": `${dashboardOrigin}/runs/${execution.id}`,
        },
      },
    };
  }

  private async newExecution(caller: WebDriverCaller, request: SessionRequest): Promise<ExecutionRecord> {
    const version = request.app.kind === "version" ? await this.version(caller, request) : null;
    const now = this.options.clock.now();
    const id = newId("ex", now);
    const createdAt = isoTime(now);
    const { device, plan } = sessionPlan(request);
    return {
      id,
      organizationId: caller.organizationId,
      kind: "session",
      testPlanId: null,
      appVersionId: version?.id ?? null,
      packageName: version?.packageName ?? null,
      version: version?.version ?? null,
      status: "queued",
      plan,
      env: {},
      summary: { ...emptySummary },
      cancelRequested: false,
      triggeredBy: caller.clientId,
      triggeredByPerson: null,
      createdAt,
      startedAt: null,
      finishedAt: null,
      ci: ciOf(request.options.ci ?? undefined),
      deviceRuns: [
        queuedDeviceRun({
          executionId: id,
          position: 0,
          shard: 0,
          shardCount: 1,
          device: { ...device },
          now,
        }),
      ],
    };
  }

  /** The registered version `testbay:options` names, of an app of the session's platform. */
  private async version(caller: WebDriverCaller, request: SessionRequest) {
    if (request.app.kind !== "version") return null;
    const { packageName, version } = request.app;
    try {
      const found = await this.options.versions.get(caller.organizationId, packageName, version);
      if (found.app.platform !== request.device.platform) {
        throw new WebDriverError(
          "invalid argument",
          `testbay:options.app ${packageName} is an ${found.app.platform} app, and the session asks for an ${request.device.platform} device`,
        );
      }
      return { id: found.version.id, packageName: found.app.packageName, version: found.version.version };
    } catch (error) {
      if (error instanceof ApiError) {
        throw new WebDriverError("session not created", `${error.detail} ${error.fix}`);
      }
      throw error;
    }
  }

  /**
   * Until the session is ready (its row says so) or failed. The queue timeout counts while the device run is
   * queued: once an agent has claimed it, the agent's own limits (its install, Appium's start, the lease) end
   * it, and the execution's end ends the wait.
   */
  private async waitForSession(
    organizationId: string,
    executionId: string,
    request: SessionRequest,
    abort: AbortSignal,
  ): Promise<SessionRecord> {
    const { clock, sessions, changes } = this.options;
    const queueDeadline = clock.now() + request.options.queueTimeoutSeconds * 1000;
    let changed = false;
    let wake: (() => void) | undefined;
    const unsubscribe = changes.subscribe(organizationId, (change) => {
      if (change.executionId !== null && change.executionId !== executionId) return;
      changed = true;
      wake?.();
    });
    try {
      for (;;) {
        changed = false;
        const session = await sessions.find(organizationId, executionId);
        if (!session) throw new Error(`session ${executionId} is not stored`);
        if (session.state === "ready") return session;
        if (session.state === "failed") {
          throw new WebDriverError(
            "session not created",
            session.message ?? "the agent could not start the session",
          );
        }
        if (session.state === "ended") {
          throw new WebDriverError(
            "session not created",
            `the session ended before it started: ${session.endReason ?? "ended"}`,
          );
        }
        const execution = await this.options.executions.get(organizationId, executionId);
        if (execution.status !== "queued" && execution.status !== "running") {
          // Cancelled, or its run ended before the agent said anything: the session never started.
          const message = notStarted(execution);
          await sessions.markFailed(executionId, "session not created", message, isoTime(clock.now()));
          throw new WebDriverError("session not created", message);
        }
        if (abort.aborted) {
          const message = "the client went away while the session waited";
          await this.options.executions.cancel(organizationId, executionId);
          await sessions.markFailed(executionId, "session not created", message, isoTime(clock.now()));
          throw new WebDriverError("session not created", message);
        }
        if (execution.status === "queued" && clock.now() >= queueDeadline) {
          await this.queueTimedOut(organizationId, execution, request);
          continue;
        }
        if (changed) continue;
        const left =
          execution.status === "queued"
            ? Math.max(0, queueDeadline - clock.now())
            : this.options.pollIntervalMs;
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            abort.removeEventListener("abort", done);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, Math.min(left, this.options.pollIntervalMs));
          abort.addEventListener("abort", done, { once: true });
          wake = done;
          if (changed) done();
        });
      }
    } finally {
      unsubscribe();
    }
  }

  /**
   * Ends the session's queued run errored with reason queue_timeout and throws `session not created` with why
   * it waited. When a claim took the run first (nothing was queued any more), returns: the wait goes on.
   */
  private async queueTimedOut(
    organizationId: string,
    execution: ExecutionRecord,
    request: SessionRequest,
  ): Promise<void> {
    const { executions, runs, sessions, clock, changes } = this.options;
    // Why it waited, said before the run ends (a waiting reason is only given for a queued execution).
    const view = await executions.view(organizationId, execution);
    const at = isoTime(clock.now());
    if (!(await runs.endQueued(organizationId, execution.id, "queue_timeout", at))) return;
    const waited = `${request.options.queueTimeoutSeconds} s`;
    const why = view.waiting_reason
      ? view.waiting_reason.detail
      : "every matching device was busy with other runs or sessions";
    const message = `no device became free within queue_timeout_seconds (${waited}): ${why}`;
    await sessions.markFailed(execution.id, "session not created", message, at);
    changes.changed(organizationId, execution.id);
    throw new WebDriverError("session not created", message);
  }
}

/** Why an execution that ended before its session was ready did not start it. */
function notStarted(execution: ExecutionRecord): string {
  const run = execution.deviceRuns[0];
  if (execution.status === "cancelled") return "the session was cancelled before it started";
  const reason = run?.reason ? ` (${run.reason})` : "";
  return `the session's execution ended ${execution.status}${reason} before the agent reported the session ready`;
}
