import type { Clock } from "../../clock.ts";
import { gcra, type RateLimitDecision, type RateLimitPolicy } from "./gcra.ts";
import type { RateLimiter } from "./limiter.ts";

/** Buckets in a Map. A key whose bucket has refilled completely holds no information and is dropped. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly arrivals = new Map<string, number>();
  private writesSinceSweep = 0;

  constructor(private readonly clock: Clock) {}

  async consume(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    return this.consumeNow(key, policy);
  }

  consumeNow(key: string, policy: RateLimitPolicy): RateLimitDecision {
    const now = this.clock.now();
    const { decision, tat } = gcra(policy, now, this.arrivals.get(key));
    this.arrivals.set(key, tat);
    if (++this.writesSinceSweep >= 10_000) this.sweep(now);
    return decision;
  }

  async peek(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    return gcra(policy, this.clock.now(), this.arrivals.get(key)).decision;
  }

  /** Number of keys held: for tests of the sweep. */
  get size(): number {
    return this.arrivals.size;
  }

  private sweep(now: number): void {
    this.writesSinceSweep = 0;
    for (const [key, tat] of this.arrivals) if (tat <= now) this.arrivals.delete(key);
  }

  async close(): Promise<void> {
    this.arrivals.clear();
  }
}
