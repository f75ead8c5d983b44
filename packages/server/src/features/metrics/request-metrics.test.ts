import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpObservation } from "./metrics-registry.ts";
import { registerRequestMetrics } from "./request-metrics.ts";

describe("registerRequestMetrics", () => {
  const app = Fastify();
  afterEach(async () => await app.close());

  it("labels each response with its route's template, and a path no route has as unmatched", async () => {
    const seen: HttpObservation[] = [];
    registerRequestMetrics(app, (observation) => seen.push(observation));
    app.get("/v1/executions/:id", async () => ({ ok: true }));
    app.post("/v1/executions/:id/cancel", async (_request, reply) => reply.code(409).send({ ok: false }));
    await app.inject({ method: "GET", url: "/v1/executions/exe_01JABCDEF" });
    await app.inject({ method: "GET", url: "/v1/executions/exe_01JXYZ?fields=all" });
    await app.inject({ method: "POST", url: "/v1/executions/exe_01JABCDEF/cancel" });
    await app.inject({ method: "GET", url: "/wp-login.php" });
    expect(seen.map(({ method, route, status }) => `${method} ${route} ${status}`)).toEqual([
      "GET /v1/executions/:id 200",
      "GET /v1/executions/:id 200",
      "POST /v1/executions/:id/cancel 409",
      "GET unmatched 404",
    ]);
    for (const { seconds } of seen) expect(seconds).toBeGreaterThanOrEqual(0);
  });
});
