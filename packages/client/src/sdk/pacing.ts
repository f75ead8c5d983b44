import type { Clock } from "./clock.ts";

/**
 * Client-side pacing (CLIENT.md rule 4): the same token bucket as the server's per-client limit, kept here
 * so that one process waits before sending rather than provoking 429. It starts from the documented policy
 * (burst 20, 4 per second) and follows what the server says in its `RateLimit-Policy` and `RateLimit` headers.
 */
export interface PacingPolicy {
  /** Requests that may be sent at once from a full bucket. */
  burst: number;
  /** Tokens regained per second. */
  perSecond: number;
}

export const defaultPacingPolicy: PacingPolicy = { burst: 20, perSecond: 4 };

/** Reads a header of the form `"name";key=value;key=value` (the first item of a list). */
function parameters(header: string | null | undefined): Map<string, number> {
  const found = new Map<string, number>();
  if (!header) return found;
  const first = header.split(",")[0] ?? "";
  for (const match of first.matchAll(/;\s*([a-z]+)\s*=\s*(\d+(?:\.\d+)?)/gi)) {
    const [, key, value] = match;
    if (key && value) found.set(key.toLowerCase(), Number(value));
  }
  return found;
}

export interface HeaderSource {
  get(name: string): string | null;
}

export class Pacer {
  private policy: PacingPolicy;
  /** Tokens in the bucket; negative while requests wait for tokens they have reserved. */
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly clock: Clock,
    policy: PacingPolicy = defaultPacingPolicy,
  ) {
    this.policy = { ...policy };
    this.tokens = policy.burst;
    this.updatedAt = clock.now();
  }

  get currentPolicy(): PacingPolicy {
    return { ...this.policy };
  }

  /** Whole or partial tokens available now (negative: owed to waiting requests). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** Reserves a token for one request and says how many milliseconds to wait before sending it. */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return Math.ceil((-this.tokens / this.policy.perSecond) * 1000);
  }

  /** Waits until one more request may be sent. */
  async take(): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await this.clock.sleep(wait);
  }

  /**
   * Follows the server: `RateLimit-Policy: "default";q=20;w=5` gives the quota and the time to refill it,
   * `RateLimit: "default";r=3;t=1` how many requests remain. The server knows better than a local count
   * (other processes may share the client), so the bucket never holds more than it says remain.
   */
  update(headers: HeaderSource): void {
    this.refill();
    const policy = parameters(headers.get("ratelimit-policy"));
    const quota = policy.get("q");
    const window = policy.get("w");
    if (quota !== undefined && quota >= 1 && window !== undefined && window > 0) {
      this.policy = { burst: quota, perSecond: quota / window };
      this.tokens = Math.min(this.tokens, quota);
    }
    const remaining = parameters(headers.get("ratelimit")).get("r");
    if (remaining !== undefined) this.tokens = Math.min(this.tokens, remaining);
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.updatedAt);
    this.updatedAt = now;
    this.tokens = Math.min(this.policy.burst, this.tokens + (elapsed / 1000) * this.policy.perSecond);
  }
}
