// A benchmark server for `npm run bench -- ratelimit`: an API instance reduced to what rate limiting involves —
// Testbay's own rate-limit hook (registerRateLimiting), error handling (the 429 problem documents) and limiter
// (BENCH_LIMITER=memory, or redis with BENCH_REDIS_URL and BENCH_REDIS_PREFIX) — in front of two routes:
//   GET /limited  charged to the client named by `x-bench-client`, under the `default` policy
//                 (BENCH_RATE_BURST / BENCH_RATE_PER_SECOND, 20 and 4 by default), or the `agent` policy, which
//                 never refuses, with `x-bench-role: agent` (to time an admitted request);
//   GET /bare     the same body, not rate limited (`rateLimit: "skip"`), as the baseline of the same process.
// Authentication is left out: it costs the same with either limiter and decides nothing about the limit.
import Fastify from "fastify";
import { systemClock } from "../../packages/server/src/clock.ts";
import {
  connectRedisRateLimiter,
  MemoryRateLimiter,
  type RateLimiter,
  registerRateLimiting,
} from "../../packages/server/src/features/ratelimit/index.ts";
import { registerErrorHandling } from "../../packages/server/src/http/error-handler.ts";
import { portOf, serveForBenchmark } from "../servers/lifecycle.ts";

export interface RateLimitServerReady {
  port: number;
  limiter: "memory" | "redis";
  policy: { burst: number; perSecond: number };
}

const body = { ok: true, organization: { id: "org_01KBENCH000000000000000000", name: "bench" } };

serveForBenchmark<RateLimitServerReady>(async () => {
  const kind = process.env.BENCH_LIMITER === "redis" ? "redis" : "memory";
  const burst = Number(process.env.BENCH_RATE_BURST ?? 20);
  const perSecond = Number(process.env.BENCH_RATE_PER_SECOND ?? 4);
  let limiter: RateLimiter;
  if (kind === "redis") {
    const url = process.env.BENCH_REDIS_URL;
    if (!url) throw new Error("BENCH_REDIS_URL must name the Redis to share buckets in");
    const redis = await connectRedisRateLimiter({
      url,
      clock: systemClock,
      logger: { warn: (obj, msg) => console.error(msg, obj) },
      keyPrefix: process.env.BENCH_REDIS_PREFIX ?? "testbay-bench:rl:",
    });
    if (redis.status() !== "ok") throw new Error(`Redis at ${url} does not answer`);
    limiter = redis;
  } else {
    limiter = new MemoryRateLimiter(systemClock);
  }

  const app = Fastify({ logger: false });
  registerErrorHandling(app, undefined);
  // Stands in for authentication: who is calling, from two headers.
  app.addHook("onRequest", (request, _reply, done) => {
    const client = request.headers["x-bench-client"];
    if (typeof client === "string") {
      request.principal = {
        clientId: client,
        organizationId: "org_bench",
        organizationName: "bench",
        role: request.headers["x-bench-role"] === "agent" ? "agent" : "ci",
        tokenExpiresAt: Number.MAX_SAFE_INTEGER,
      };
    }
    done();
  });
  registerRateLimiting(
    app,
    limiter,
    {
      default: { name: "default", burst, perSecond },
      agent: { name: "agent", burst: 1e9, perSecond: 1e9 },
    },
    "bench",
  );
  app.get("/limited", () => body);
  app.get("/bare", { config: { rateLimit: "skip" } }, () => body);
  app.addHook("onClose", () => limiter.close());
  await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    ready: { port: portOf(app.server.address()), limiter: kind, policy: { burst, perSecond } },
    close: () => app.close(),
  };
});
