/**
 * Every metric of API.md §15 in one prom-client Registry per server (never prom-client's global one: two
 * servers in one process, as the scaled tests run them, each count their own requests). Counters and
 * histograms are this instance's; the shared gauges are filled at each scrape from one cached read of the
 * database (shared-state.ts).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Meters, WebhookAttemptResult } from "./meters.ts";
import {
  finishedStatuses,
  httpDurationBuckets,
  metricNames,
  queueBuckets,
  webhookLagBuckets,
  webhookResults,
} from "./metric-names.ts";
import type { SharedState } from "./shared-state.ts";

/**
 * prom-client's default metrics that `promtool check metrics` refuses: gauges whose names end in `_total`,
 * which Prometheus keeps for counters. Each repeats the sum of a gauge kept beside it (nodejs_active_handles,
 * …_requests, …_resources, by type), so nothing is lost by leaving them out.
 */
export const refusedDefaultMetrics = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

export interface HttpObservation {
  method: string;
  /** The route's template (`/v1/executions/:id`), or metric-names.ts unmatchedRoute. */
  route: string;
  status: number;
  seconds: number;
}

export interface MetricsRegistry {
  registry: Registry;
  meters: Meters;
  observeRequest(request: HttpObservation): void;
}

const secondsBetween = (from: string, to: string) => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);

export function createMetricsRegistry(
  sharedState: () => Promise<SharedState>,
  now: () => number,
): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of refusedDefaultMetrics) registry.removeSingleMetric(name);

  const httpRequests = new Counter({
    name: metricNames.httpRequests,
    help: "HTTP requests answered by this instance, by method, route template and status code.",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: metricNames.httpRequestDuration,
    help: "Time from a request's arrival to its response, by method and route template, on this instance.",
    labelNames: ["method", "route"] as const,
    buckets: httpDurationBuckets,
    registers: [registry],
  });
  const executionsFinished = new Counter({
    name: metricNames.executionsFinished,
    help: "Executions that ended on this instance, by final status.",
    labelNames: ["status"] as const,
    registers: [registry],
  });
  for (const status of finishedStatuses) executionsFinished.inc({ status }, 0);
  const executionQueue = new Histogram({
    name: metricNames.executionQueue,
    help: "Time executions waited from being queued to their first device run starting, by that run's platform (host: no device), for starts claimed through this instance.",
    labelNames: ["platform"] as const,
    buckets: queueBuckets,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: metricNames.webhookDeliveries,
    help: "Webhook delivery attempts sent by this instance, by result: delivered, retrying (another attempt is scheduled) or failed (retry schedule spent).",
    labelNames: ["result"] as const,
    registers: [registry],
  });
  for (const result of webhookResults) webhookDeliveries.inc({ result }, 0);
  const webhookLag = new Histogram({
    name: metricNames.webhookDeliveryLag,
    help: "Time from a webhook delivery being made to its successful attempt, retries included, on this instance.",
    buckets: webhookLagBuckets,
    registers: [registry],
  });
  const uploadBytes = new Counter({
    name: metricNames.uploadBytes,
    help: "Bytes of uploads (binaries, test packages, version files) received and stored by this instance.",
    registers: [registry],
  });

  // The shared gauges: reset and refilled at each scrape, so a platform or state that is gone reads as gone.
  new Gauge({
    name: metricNames.executionsQueued,
    help: "Queued executions on the whole server, by the platform of their first device entry (host: a plan without devices).",
    labelNames: ["platform"] as const,
    registers: [registry],
    async collect() {
      const state = await sharedState();
      this.reset();
      for (const [platform, count] of state.queued) this.set({ platform }, count);
    },
  });
  new Gauge({
    name: metricNames.deviceRunsRunning,
    help: "Device runs running now on the whole server.",
    registers: [registry],
    async collect() {
      this.set((await sharedState()).deviceRunsRunning);
    },
  });
  new Gauge({
    name: metricNames.agentsOnline,
    help: "Agents seen within the last 75 s by any instance (as GET /v1/agents calls them online).",
    registers: [registry],
    async collect() {
      this.set((await sharedState()).agentsOnline);
    },
  });
  new Gauge({
    name: metricNames.devices,
    help: "The online agents' devices, by platform and state (idle, busy, drained, booting, resetting, failed).",
    labelNames: ["platform", "state"] as const,
    registers: [registry],
    async collect() {
      const state = await sharedState();
      this.reset();
      for (const { platform, state: deviceState, count } of state.devices) {
        this.set({ platform, state: deviceState }, count);
      }
    },
  });

  const meters: Meters = {
    executionFinished: (status) => executionsFinished.inc({ status }),
    executionStarted: (platform, queuedAt, startedAt) =>
      executionQueue.observe({ platform }, secondsBetween(queuedAt, startedAt)),
    webhookAttempt: (result: WebhookAttemptResult, createdAt) => {
      webhookDeliveries.inc({ result });
      if (result === "delivered")
        webhookLag.observe(secondsBetween(createdAt, new Date(now()).toISOString()));
    },
    uploaded: (bytes) => uploadBytes.inc(bytes),
  };
  return {
    registry,
    meters,
    observeRequest({ method, route, status, seconds }) {
      httpRequests.inc({ method, route, status: String(status) });
      httpDuration.observe({ method, route }, seconds);
    },
  };
}
