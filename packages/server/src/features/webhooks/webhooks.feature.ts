import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { BackgroundJobs } from "../../background-jobs.ts";
import { type Clock, isoTime } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { AuditLog } from "../audit/index.ts";
import type { SigningKey } from "../auth/index.ts";
import type { ExecutionsService } from "../executions/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import type { Meters } from "../metrics/index.ts";
import { systemResolveAll } from "./address-guard.ts";
import { CoalescedRound } from "./coalesced-round.ts";
import { DeliveryWorker, sendBackstopMs } from "./delivery-worker.ts";
import { fanOutBackstopMs, fanOutWakeGapMs, WebhookFanOut } from "./fan-out.ts";
import { SecretBox } from "./secret-box.ts";
import { AttemptSender } from "./send-attempt.ts";
import { WebhooksRepo } from "./webhooks.repo.ts";
import { webhooksRoutes } from "./webhooks.routes.ts";
import { WebhooksService } from "./webhooks.service.ts";

export interface WebhooksDeps {
  database: DatabaseHandle;
  clock: Clock;
  log: FastifyBaseLogger;
  config: Pick<Config, "webhookAllowPrivate" | "webhookRetryScheduleMs" | "publicUrl">;
  /** Endpoints' secrets are sealed with a key made from it (SecretBox). */
  signingKey: SigningKey;
  audit: AuditLog;
  /** Describes an execution's events with the execution object, as GET /v1/executions/{id} has it. */
  executions: ExecutionsService;
  /** A change of an execution on this instance wakes the fan-out (features/live). */
  changes: ExecutionChanges;
  /** The backstop polls (fanOutBackstopMs, sendBackstopMs); tests lengthen them to prove wake-ups. */
  backstopMs?: { fanOut?: number; send?: number } | undefined;
  /** Counts delivery attempts and their lag (API.md §15); none without TESTBAY_METRICS. */
  meters?: Meters | undefined;
}

/** How long one attempt may take before it counts as failed. */
const attemptTimeoutMs = 10_000;

/**
 * Webhooks' composition root (API.md §9): endpoints and their routes, the fan-out that turns outbox events
 * into deliveries, and the sender. Built before what appends events without an execution change
 * (versions' uploads), which wake the fan-out through wakeFanOut.
 */
export function createWebhooks({
  database,
  clock,
  log,
  config,
  audit,
  executions,
  changes,
  ...deps
}: WebhooksDeps) {
  const repo = new WebhooksRepo(database.db, database.dialect);
  const secrets = new SecretBox(deps.signingKey.privateKey);
  const deliveryWorker = new DeliveryWorker({
    repo,
    sender: new AttemptSender({
      allowPrivate: config.webhookAllowPrivate,
      resolveAll: systemResolveAll,
      timeoutMs: attemptTimeoutMs,
    }),
    secrets,
    clock,
    retryScheduleMs: config.webhookRetryScheduleMs,
    // Well past an attempt's 10 s: a live sender never loses its delivery to another instance.
    leaseMs: attemptTimeoutMs + 50_000,
    publicUrl: config.publicUrl,
    onError: (error) => log.error({ err: error }, "webhook delivery round failed"),
    meters: deps.meters,
  });
  const webhooks = new WebhooksService({
    repo,
    secrets,
    audit,
    clock,
    allowPrivate: config.webhookAllowPrivate,
    publicUrl: config.publicUrl,
    onDue: () => deliveryWorker.wake(),
  });
  const fanOut = new WebhookFanOut(database.db, database.dialect, clock, async (event) => {
    // The outbox names the execution; receivers get the execution object as GET /v1/executions/{id} has it.
    if (!event.type.startsWith("execution.")) return undefined;
    const id = event.data.execution_id;
    if (typeof id !== "string") return undefined;
    try {
      return await executions.view(event.organizationId, await executions.get(event.organizationId, id));
    } catch {
      return undefined;
    }
  });
  // Webhooks start on a signal: a change of an execution on this instance (committed, with the events it
  // appended) fans out, and deliveries inserted start the sender. The polls are a slow backstop for what no
  // signal here announced (fanOutBackstopMs, sendBackstopMs); other instances need no wake-up.
  const fanOutRound = new CoalescedRound(
    () => fanOut.drain(() => deliveryWorker.wake()),
    (error) => log.error({ job: "fan events out to webhooks", err: error }, "background job failed"),
    fanOutWakeGapMs,
  );
  let stopObserving = () => {};
  return {
    webhooks,
    /** An event was appended (an upload's version.uploaded): fan it out now rather than at the backstop poll. */
    wakeFanOut: () => fanOutRound.wake(),
    async register(app: FastifyInstance): Promise<void> {
      await app.register(webhooksRoutes, { webhooks });
    },
    async start(jobs: BackgroundJobs): Promise<void> {
      await jobs.hourly("forget webhook deliveries finished 30 days ago", () =>
        repo.purgeFinishedBefore(isoTime(clock.now() - 30 * 24 * 3600 * 1000)),
      );
      stopObserving = changes.observe(() => fanOutRound.wake());
      jobs.every("fan events out to webhooks", deps.backstopMs?.fanOut ?? fanOutBackstopMs, () =>
        fanOutRound.run(),
      );
      jobs.every("send due webhook deliveries", deps.backstopMs?.send ?? sendBackstopMs, () =>
        deliveryWorker.tick(),
      );
    },
    async stop(): Promise<void> {
      stopObserving();
      await fanOutRound.idle();
      // Sends in flight are dropped unrecorded: their leases lapse and another instance (or this one,
      // restarted) sends them again. At least once, never lost.
      await deliveryWorker.close();
    },
  };
}
