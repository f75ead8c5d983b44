/**
 * GCRA (generic cell rate algorithm): a token bucket kept as a single number per key, the "theoretical
 * arrival time" (TAT) at which the bucket would be full again. It needs no timer and no refill loop, and the
 * same arithmetic runs in memory and inside one Redis Lua script.
 */

export interface RateLimitPolicy {
  /** Name shown in the RateLimit headers. */
  name: string;
  /** Requests that may be made at once from a full bucket. */
  burst: number;
  /** Tokens regained per second. */
  perSecond: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Requests that could still be made right now. */
  remaining: number;
  /** Milliseconds until the next token is regained (0 when the bucket is full). */
  nextTokenMs: number;
  /** When refused: milliseconds until this request would be admitted. */
  retryAfterMs: number;
  /**
   * Set when the shared store could not be asked (Redis down or slow) and the request was admitted unlimited:
   * the limiter fails open rather than turning an outage of Redis into an outage of the API.
   */
  failedOpen?: true;
}

/**
 * Decides one request. `tat` is the stored arrival time (undefined for an unknown key); returns the
 * decision and the TAT to store (unchanged when the request is refused, so refused requests cost nothing).
 */
export function gcra(
  policy: RateLimitPolicy,
  now: number,
  tat: number | undefined,
): { decision: RateLimitDecision; tat: number } {
  const interval = 1000 / policy.perSecond;
  const capacity = policy.burst * interval;
  const start = Math.max(tat ?? now, now);
  const next = start + interval;

  if (next - now > capacity) {
    const used = start - now;
    return {
      decision: {
        allowed: false,
        remaining: 0,
        nextTokenMs: Math.max(0, used - (capacity - interval)),
        retryAfterMs: next - now - capacity,
      },
      tat: start,
    };
  }
  const used = next - now;
  const remaining = Math.floor((capacity - used) / interval + 1e-9);
  // The bucket holds `remaining` whole tokens; the next one is whole once `used` falls to the next multiple.
  const partial = used - (policy.burst - remaining - 1) * interval;
  return {
    decision: { allowed: true, remaining, nextTokenMs: Math.max(0, partial), retryAfterMs: 0 },
    tat: next,
  };
}
