import type { RedisRateLimiter, RedisRateLimiterOptions } from "./redis-limiter.ts";

export type { RateLimitDecision, RateLimitPolicy } from "./gcra.ts";
export type { RateLimiter } from "./limiter.ts";
export { MemoryRateLimiter } from "./memory-limiter.ts";
export {
  chargeFailure,
  chargeRequest,
  policiesFrom,
  policyForRole,
  type RateLimitPolicies,
  refuseWhenFailuresSpent,
  registerRateLimiting,
} from "./ratelimit.hooks.ts";

export type { RateLimiterLogger, RedisRateLimiter, RedisRateLimiterOptions } from "./redis-limiter.ts";

/**
 * Connects the shared (Redis) limiter, loading ioredis only then: a server without TESTBAY_REDIS_URL never
 * needs it, and every module loaded stays in the heap that each full GC marks (bench/README.md, "upload").
 */
export async function connectRedisRateLimiter(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
  const { RedisRateLimiter } = await import("./redis-limiter.ts");
  return RedisRateLimiter.connect(options);
}
