import { setTimeout as delay } from "node:timers/promises";

/**
 * Time as the SDK sees it: what time it is and how to wait. Injected everywhere time matters, so tests move
 * a fake clock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds (a fake clock moves itself forward instead). When `signal` fires first
   * it rejects at once with the signal's reason, as fetch does, and lets go of its timer. Callers that must
   * not outlast the signal still wrap it in `untilAborted`: a clock given from outside may ignore the signal.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    signal?.throwIfAborted();
    if (ms <= 0) return;
    try {
      await delay(ms, undefined, signal ? { signal } : {});
    } catch (error) {
      // node:timers rejects with its own AbortError; the caller sees the signal's reason, as from fetch.
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
  },
};

/**
 * Waits for `work`, but rejects with the signal's reason as soon as `signal` fires, leaving `work` to run
 * on: for a wait on something shared (the one token request, token-cache.ts) that other callers still
 * want, and for a sleep on a clock that may not heed the signal. A rejection of `work` after the abort is
 * dropped, never unhandled.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** A source of uniformly distributed numbers in [0, 1), like Math.random; seeded in tests. */
export type Random = () => number;

/**
 * A small seeded generator (mulberry32): the same seed gives the same sequence, so tests can state the exact
 * delays a backoff produces.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A clock that moves only when slept on or told to: every wait is recorded, none takes real time. */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];

  constructor(private current = Date.parse("2026-01-01T00:00:00.000Z")) {}

  now(): number {
    return this.current;
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.sleeps.push(ms);
    this.current += Math.max(0, ms);
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * A fake clock whose sleeps do not end by themselves: each is held until `release()`, which moves the clock
 * past it, or until its signal fires. For tests about what happens during a wait (a retry's backoff), with
 * no real time passing.
 */
export class HeldClock extends FakeClock {
  private readonly holding: { ms: number; end: () => void }[] = [];
  private readonly heldWaiters: (() => void)[] = [];

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    return new Promise<void>((resolve, reject) => {
      const sleeper = {
        ms,
        end: () => {
          signal?.removeEventListener("abort", abort);
          resolve();
        },
      };
      const abort = () => {
        this.holding.splice(this.holding.indexOf(sleeper), 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", abort, { once: true });
      this.holding.push(sleeper);
      for (const wake of this.heldWaiters.splice(0)) wake();
    });
  }

  /** Resolves once a sleep is being held: at once when one is. */
  held(): Promise<void> {
    if (this.holding.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.heldWaiters.push(resolve));
  }

  /** Ends every held sleep, the clock moved on by the longest of them. */
  release(): void {
    const sleepers = this.holding.splice(0);
    this.advance(Math.max(0, ...sleepers.map((sleeper) => sleeper.ms)));
    for (const sleeper of sleepers) sleeper.end();
  }
}
