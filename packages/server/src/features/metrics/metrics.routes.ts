import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { ApiError } from "../../errors.ts";
import { bearerMatches } from "./bearer-token.ts";

export interface MetricsRouteOptions {
  registry: Registry;
  /** TESTBAY_METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | undefined;
}

const fix =
  "Send the token set in TESTBAY_METRICS_TOKEN as Authorization: Bearer <token>; in Prometheus, the scrape job's authorization: {credentials: <token>} (or credentials_file). See docs/operating.md, Metrics.";

/**
 * GET /metrics (API.md §15): the text exposition format Prometheus scrapes, outside /v1 like the health probes.
 * Not rate limited (a scrape every few seconds from several Prometheus servers is normal) and not behind the
 * API's authentication: its own optional bearer token instead, which is what Prometheus's scrape configuration
 * can send. Left out of the OpenAPI document: it answers Prometheus's format, not the API's JSON.
 */
export async function metricsRoutes(app: FastifyInstance, { registry, token }: MetricsRouteOptions) {
  app.get(
    "/metrics",
    { config: { auth: "public", rateLimit: "skip" }, schema: { hide: true } },
    async (request, reply) => {
      if (token !== undefined) {
        const header = request.headers.authorization;
        if (!bearerMatches(header, token)) {
          throw new ApiError("invalid_access_token", {
            reason: header === undefined ? "missing" : "wrong_metrics_token",
            detail:
              header === undefined
                ? "GET /metrics needs the metrics token: this server sets TESTBAY_METRICS_TOKEN."
                : "The Authorization header does not carry this server's metrics token.",
            fix,
            headers: { "www-authenticate": 'Bearer realm="testbay-metrics"' },
          });
        }
      }
      const text = await registry.metrics();
      return reply
        .header("content-type", registry.contentType)
        .header("cache-control", "no-store")
        .send(text);
    },
  );
}
