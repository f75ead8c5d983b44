import type { FastifyInstance } from "fastify";
import type { AppServices } from "./app-options.ts";
import type { BackgroundJobs } from "./background-jobs.ts";
import type { Feature } from "./feature.ts";

interface ClosingParts {
  /** What runs beside the server and talks to it over HTTP (the local agent): stopped first. */
  beforeClose: AppServices["beforeClose"];
  /** In the order app.ts started them; stopped in the reverse one. */
  features: readonly Feature[];
  /** The PostgreSQL notifications' listener, when there is one. */
  closeNotifications: () => Promise<void>;
  jobs: BackgroundJobs;
  /** Closed last, in this order, once no request is left: the blob store, rate limits, the database. */
  resources: ReadonlyArray<() => Promise<void> | undefined>;
}

/**
 * How the server closes (on SIGTERM, main.ts closeOnSignals; or a test's app.close()): while it still answers,
 * what talks to it stops, then the features' loops; once the last request has ended, the timers and
 * connections to the database, Redis and the blob store.
 */
export function closeInOrder(app: FastifyInstance, parts: ClosingParts): void {
  let closeTimers: NodeJS.Timeout[] = [];
  app.addHook("preClose", async () => {
    for (const stop of parts.beforeClose) await stop();
    for (const feature of parts.features.toReversed()) await feature.stop?.();
    await parts.closeNotifications();
    // Node closes the connections that are idle when the close begins; one busy then (a claim ending
    // right now) and idle a moment later would hold the close up for the whole keep-alive timeout. Close
    // those as they fall idle, and after 5 s whatever is left.
    closeTimers = [
      setInterval(() => app.server.closeIdleConnections(), 100),
      setTimeout(() => app.server.closeAllConnections(), 5000),
    ];
    for (const timer of closeTimers) timer.unref();
  });
  app.addHook("onClose", async () => {
    parts.jobs.stop();
    for (const timer of closeTimers) clearTimeout(timer);
    for (const close of parts.resources) await close();
  });
}
