import { setTimeout as sleep } from "node:timers/promises";
import type { Clock } from "../../clock.ts";
import type { RateLimiter, RateLimitPolicy } from "../ratelimit/index.ts";

/**
 * Repeated failed sign-ins are slowed down, never refused (API.md §10). Each account and each client address
 * keeps a count of its recent failures; past `perAccount` (or `perAddress`) of them, every further attempt
 * waits before its password is even checked: 1 s, then twice as long per further failure, at most
 * `maxDelaySeconds`. Failures are forgotten steadily, one every `windowSeconds / perAccount` (or perAddress).
 *
 * Why a wait and not a lockout: a lockout (what this replaced: 429 for 81 s after ten failures, even for the
 * right password, and every account from an address after thirty) lets anyone who knows an address such as
 * admin@localhost keep its owner out with one request a minute, and behind a proxy, everyone out at once. A
 * wait costs the owner at most `maxDelaySeconds` once; it costs a guesser that much per guess.
 *
 * Why before the check, for right and wrong passwords alike: a wait only on failures would tell a guesser
 * that a quick answer is the right one, so with many attempts in flight the guesses would not be slowed at
 * all. Attempts in flight at once each wait their own delay, so what bounds parallel guessing is the request
 * limit every public route has per address (ratelimit.hooks.ts: 20 at once, 4 a second), and behind that the
 * slow password hash (passwords.ts).
 *
 * The counts live in the shared rate limiter (in Redis when configured: every instance sees the same count)
 * as GCRA buckets that only failures are charged to; `peek` reads one without charging it.
 */
export interface LoginLimitSettings {
  /** Failures per account, within the window, before its sign-ins are slowed down. */
  perAccount: number;
  /** Failures per client address, within the window, before its sign-ins are slowed down. */
  perAddress: number;
  /** The time over which `perAccount` (or `perAddress`) failures are forgotten. */
  windowSeconds: number;
  /** The longest an attempt waits, however many failures came before it. */
  maxDelaySeconds: number;
}

export const defaultLoginLimits: LoginLimitSettings = {
  perAccount: 10,
  perAddress: 30,
  windowSeconds: 15 * 60,
  maxDelaySeconds: 30,
};

const firstDelayMs = 1000;

/**
 * Failures counted beyond the free ones: enough for the delay to reach its cap by doubling (2^6 s > 60 s),
 * and a ceiling on how long a flood is remembered (the bucket refuses, so stores nothing, once full).
 */
const countedBeyondFree = 6;

/** A failure count: a bucket that holds the recent failures, regaining `free` of them per window. */
export function failureCount(name: string, free: number, windowSeconds: number): RateLimitPolicy {
  return { name, burst: free + countedBeyondFree, perSecond: free / windowSeconds };
}

/** Recent failures in a count, from a peek: the bucket would have `remaining` left after one more. */
export function failuresIn(policy: RateLimitPolicy, remaining: number): number {
  return Math.max(0, policy.burst - 1 - remaining);
}

/** How long an attempt waits after `failures` recent failures, `free` of them without a wait. */
export function delayAfter(failures: number, free: number, maxDelayMs: number): number {
  if (failures < free) return 0;
  return Math.min(maxDelayMs, firstDelayMs * 2 ** (failures - free));
}

export interface FailureKey {
  key: string;
  policy: RateLimitPolicy;
  free: number;
}

export class SignInSlowdown {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly clock: Clock,
    private readonly settings: LoginLimitSettings,
  ) {}

  readonly account = (keyPart: string): FailureKey => ({
    key: `login-account:${keyPart}`,
    policy: failureCount("login-account", this.settings.perAccount, this.settings.windowSeconds),
    free: this.settings.perAccount,
  });

  readonly address = (keyPart: string): FailureKey => ({
    key: `login-address:${keyPart}`,
    policy: failureCount("login-address", this.settings.perAddress, this.settings.windowSeconds),
    free: this.settings.perAddress,
  });

  /** The wait an attempt charged to these counts owes now, in ms (the longest of theirs). */
  async delayFor(counts: readonly FailureKey[]): Promise<number> {
    let delay = 0;
    for (const { key, policy, free } of counts) {
      const decision = await this.limiter.peek(key, policy);
      const failures = decision.allowed ? failuresIn(policy, decision.remaining) : policy.burst;
      delay = Math.max(delay, delayAfter(failures, free, this.settings.maxDelaySeconds * 1000));
    }
    return delay;
  }

  async chargeFailure(counts: readonly FailureKey[]): Promise<void> {
    for (const { key, policy } of counts) await this.limiter.consume(key, policy);
  }

  /** Waits until the server's clock has moved `ms` on (see waitOnClock). */
  wait(ms: number): Promise<void> {
    return waitOnClock(this.clock, ms);
  }
}

/**
 * Resolves once `clock` has moved `ms` on, looking at it at least every `pollMs` of real time. The server's
 * clock is real time in production, so this waits `ms`; tests move a manual clock (clock.ts) instead of
 * sleeping, and the wait ends within `pollMs` of the move.
 */
export async function waitOnClock(clock: Clock, ms: number, pollMs = 50): Promise<void> {
  const until = clock.now() + ms;
  for (let left = ms; left > 0; left = until - clock.now()) await sleep(Math.min(left, pollMs));
}
