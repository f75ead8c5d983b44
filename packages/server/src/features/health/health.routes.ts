import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (or times out) when it does not. */
  check(): Promise<void>;
}

const CheckResult = Type.Object({
  name: Type.String(),
  ok: Type.Boolean(),
  error: Type.Optional(Type.String()),
});
const Readiness = Type.Object({
  status: Type.Union([Type.Literal("ready"), Type.Literal("unavailable")]),
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
        response: { 200: Type.Object({ status: Type.Literal("ok") }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      config: { auth: "public", rateLimit: "skip" },
      schema: {
        summary: "Readiness: database and storage reachable",
        tags: ["health"],
        security: [],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (request, reply) => {
      const results = await Promise.all(
        checks.map(async ({ name, check }) => {
          try {
            await withTimeout(check());
            return { name, ok: true };
          } catch (error) {
            request.log.warn({ check: name, err: error }, "readiness check failed");
            // The name of the failing dependency helps an operator; its error text may hold hosts or paths.
            return { name, ok: false, error: "unreachable" };
          }
        }),
      );
      const ready = results.every((r) => r.ok);
      return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "unavailable", checks: results });
    },
  );
};
