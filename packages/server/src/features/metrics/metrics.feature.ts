import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { BlobStore } from "../../storage/index.ts";
import { CachedRead } from "./cached-read.ts";
import type { Meters } from "./meters.ts";
import { metricsRoutes } from "./metrics.routes.ts";
import { createMetricsRegistry } from "./metrics-registry.ts";
import { registerRequestMetrics } from "./request-metrics.ts";
import { readSharedState } from "./shared-state.ts";
import { countingUploads } from "./upload-counting-store.ts";

export interface MetricsDeps {
  database: DatabaseHandle;
  clock: Clock;
  config: Pick<Config, "metrics">;
  /** How long one read of the shared gauges serves scrapes (1 s); tests shorten it. */
  sharedStateTtlMs?: number;
}

/**
 * Metrics' composition root (API.md §15). With TESTBAY_METRICS unset it makes nothing: no registry, no hook,
 * no route, and `meters` undefined, so the features it would count call nothing. Otherwise `meters` is what
 * the features that count things are given (compose-features.ts), `countUploads` wraps the store uploads go
 * to, `registerHooks` times every request (before the routes, app.ts) and `register` adds GET /metrics.
 */
export function createMetrics({ database, clock, config, sharedStateTtlMs = 1000 }: MetricsDeps) {
  if (!config.metrics.enabled) {
    return {
      meters: undefined as Meters | undefined,
      countUploads: (store: BlobStore) => store,
      registerHooks: (_app: FastifyInstance) => {},
      register: async (_app: FastifyInstance) => {},
    };
  }
  const shared = new CachedRead(() => readSharedState(database.db, clock.now()), sharedStateTtlMs);
  const metrics = createMetricsRegistry(
    () => shared.get(),
    () => clock.now(),
  );
  return {
    meters: metrics.meters as Meters | undefined,
    countUploads: (store: BlobStore) => countingUploads(store, metrics.meters),
    registerHooks: (app: FastifyInstance) => registerRequestMetrics(app, metrics.observeRequest),
    register: async (app: FastifyInstance) => {
      await app.register(metricsRoutes, { registry: metrics.registry, token: config.metrics.token });
    },
  };
}
