import type { RateLimitDecision, RateLimitPolicy } from "./gcra.ts";

/**
 * The rate-limit port. The embedded default keeps buckets in this process; with several API instances
 * a shared store (Redis) holds them, so the limit holds per client rather than per instance.
 */
export interface RateLimiter {
  consume(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision>;
  close(): Promise<void>;
}
