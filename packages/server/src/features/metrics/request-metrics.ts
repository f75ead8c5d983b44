import type { FastifyInstance } from "fastify";
import { unmatchedRoute } from "./metric-names.ts";
import type { HttpObservation } from "./metrics-registry.ts";

/**
 * Counts and times every response (API.md §15) by its route's template — `request.routeOptions.url`, such as
 * `/v1/executions/:id` — never the path asked for, which would give each execution its own series. A request
 * no route matched (a 404 from the not-found handler) has no template and is counted as `unmatched`.
 */
export function registerRequestMetrics(app: FastifyInstance, observe: (request: HttpObservation) => void) {
  app.addHook("onResponse", (request, reply, done) => {
    observe({
      method: request.method,
      route: request.is404 ? unmatchedRoute : (request.routeOptions.url ?? unmatchedRoute),
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
}
