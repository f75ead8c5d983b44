import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { ReadinessCheck } from "../health/health.routes.ts";
import type { RateLimiter } from "./limiter.ts";
import { MemoryRateLimiter } from "./memory-limiter.ts";
import { policiesFrom, registerRateLimiting } from "./ratelimit.hooks.ts";
import type { RateLimiterLogger, RedisRateLimiter, RedisRateLimiterOptions } from "./redis-limiter.ts";

export interface RateLimitingDeps {
  config: Pick<Config, "redisUrl" | "redisCommandTimeoutMs" | "rateLimit" | "agentRateLimit">;
  clock: Clock;
  logger: RateLimiterLogger & { child(bindings: Record<string, unknown>): RateLimiterLogger };
  /** The signing key's kid: buckets are kept per deployment (see registerRateLimiting). */
  deployment: string;
  /** How long a bucket outlives its refill in Redis (RedisRateLimiterOptions.ttlSlackMs); AppOptions says why. */
  keySlackMs?: number;
}

/** Rate limiting's composition root: the limiter (shared in Redis, or in memory), its policies and its hook. */
export async function createRateLimiting({
  config,
  clock,
  logger,
  deployment,
  keySlackMs,
}: RateLimitingDeps) {
  // With several instances the buckets must be shared (Redis); one instance keeps them in memory.
  const redisLimiter = config.redisUrl
    ? await connectRedisRateLimiter({
        url: config.redisUrl,
        commandTimeoutMs: config.redisCommandTimeoutMs,
        ...(keySlackMs === undefined ? {} : { ttlSlackMs: keySlackMs }),
        clock,
        logger: logger.child({ component: "rate_limiter" }),
      })
    : undefined;
  const limiter: RateLimiter = redisLimiter ?? new MemoryRateLimiter(clock);
  const policies = policiesFrom(config);
  // Without Redis the server still serves (fail open): /readyz says degraded but stays 200.
  const readiness: ReadinessCheck[] = redisLimiter
    ? [{ name: "rate_limiter", check: () => redisLimiter.check(), degradable: true }]
    : [];
  return {
    limiter,
    policies,
    readiness,
    /** Counts each request against its caller's bucket: after authentication, which says who is calling. */
    registerHooks(app: FastifyInstance): void {
      registerRateLimiting(app, limiter, policies, deployment);
    },
    close: () => limiter.close(),
  };
}

/**
 * Connects the shared (Redis) limiter, loading ioredis only then: a server without TESTBAY_REDIS_URL never
 * needs it, and every module loaded stays in the heap that each full GC marks (bench/README.md, "upload").
 */
export async function connectRedisRateLimiter(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
  const { RedisRateLimiter } = await import("./redis-limiter.ts");
  return RedisRateLimiter.connect(options);
}
