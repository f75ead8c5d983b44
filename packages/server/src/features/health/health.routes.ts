import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { serverVersion } from "../downloads/index.ts";

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (or times out) when it does not. */
  check(): Promise<void>;
  /**
   * The server keeps serving without it, in a degraded mode (the Redis rate limiter admits every request while
   * Redis is down): its failure shows as `degraded: true` and does not make /readyz answer 503. Such a
   * dependency logs its own problems, so a failed probe is not logged again here.
   */
  degradable?: boolean;
}

const CheckResult = Type.Object({
  name: Type.String(),
  ok: Type.Boolean(),
  /** Failed, but the server keeps serving without it. */
  degraded: Type.Optional(Type.Literal(true)),
  error: Type.Optional(Type.String()),
});
const Readiness = Type.Object({
  /** `degraded`: every check that must pass passed, and some that may fail did (answered with 200). */
  status: Type.Union([Type.Literal("ready"), Type.Literal("degraded"), Type.Literal("unavailable")]),
  checks: Type.Array(CheckResult),
});

const checkTimeoutMs = 2000;

function withTimeout(promise: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${checkTimeoutMs} ms`)), checkTimeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Probes for load balancers and orchestrators: outside /v1, unauthenticated and not rate limited. */
export const healthRoutes: FastifyPluginAsyncTypebox<{ checks: ReadinessCheck[] }> = async (
  app,
  { checks },
) => {
  app.get(
    "/healthz",
    {
      config: { auth: "public", rateLimit: "skip" },
      schema: {
        summary: "Liveness: the process answers",
        tags: ["health"],
        security: [],
        response: { 200: Type.Object({ status: Type.Literal("ok"), version: Type.String() }) },
      },
    },
    async () => ({ status: "ok" as const, version: serverVersion }),
  );

  app.get(
    "/readyz",
    {
      config: { auth: "public", rateLimit: "skip" },
      schema: {
        summary: "Readiness: database and storage reachable (and the rate limiter's Redis, or degraded)",
        tags: ["health"],
        security: [],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (request, reply) => {
      const results = await Promise.all(
        checks.map(async ({ name, check, degradable }) => {
          try {
            await withTimeout(check());
            return { name, ok: true };
          } catch (error) {
            // The name of the failing dependency helps an operator; its error text may hold hosts or paths.
            if (degradable) return { name, ok: false, degraded: true as const, error: "unreachable" };
            request.log.warn({ check: name, err: error }, "readiness check failed");
            return { name, ok: false, error: "unreachable" };
          }
        }),
      );
      const ready = results.every((r) => r.ok || r.degraded);
      const status = !ready ? "unavailable" : results.every((r) => r.ok) ? "ready" : "degraded";
      return reply.code(ready ? 200 : 503).send({ status, checks: results });
    },
  );
};
