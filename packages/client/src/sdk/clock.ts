import { setTimeout as delay } from "node:timers/promises";

/**
 * Time as the SDK sees it: what time it is and how to wait. Injected everywhere time matters, so tests move
 * a fake clock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds (a fake clock moves itself forward instead). */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => (ms > 0 ? delay(ms) : Promise.resolve()),
};

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

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.current += Math.max(0, ms);
  }

  advance(ms: number): void {
    this.current += ms;
  }
}
