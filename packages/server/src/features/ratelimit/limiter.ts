import type { RateLimitDecision, RateLimitPolicy } from "./gcra.ts";

/**
 * The rate-limit port. The embedded default keeps buckets in this process; with several API instances
 * a shared store (Redis) holds them, so the limit holds per client rather than per instance.
 */
export interface RateLimiter {
  consume(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision>;
  /**
   * The same decision as `consume`, made synchronously: only limiters whose buckets live in this process have
   * it. The per-request hook uses it when present, which saves a promise on every request.
   */
  consumeNow?(key: string, policy: RateLimitPolicy): RateLimitDecision;
  /**
   * The decision `consume` would make now, without charging anything: for counts that only failures are
   * charged to (failed token calls, failed sign-ins), asked before the attempt is made.
   */
  peek(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision>;
  close(): Promise<void>;
}
