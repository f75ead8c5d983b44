export type { RateLimitDecision, RateLimitPolicy } from "./gcra.ts";
export type { RateLimiter } from "./limiter.ts";
export { MemoryRateLimiter } from "./memory-limiter.ts";
export { connectRedisRateLimiter, createRateLimiting } from "./ratelimit.feature.ts";
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
