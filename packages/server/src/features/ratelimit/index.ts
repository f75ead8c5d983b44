export type { RateLimitDecision, RateLimitPolicy } from "./gcra.ts";
export type { RateLimiter } from "./limiter.ts";
export { MemoryRateLimiter } from "./memory-limiter.ts";
export {
  chargeRequest,
  policiesFrom,
  policyForRole,
  type RateLimitPolicies,
  registerRateLimiting,
} from "./ratelimit.hooks.ts";
export {
  type RateLimiterLogger,
  RedisRateLimiter,
  type RedisRateLimiterOptions,
} from "./redis-limiter.ts";
