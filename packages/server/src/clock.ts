/** Milliseconds since the epoch. Injected everywhere time matters so tests can move it by hand. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to: for tests of expiry and rate limits without sleeping. */
export class ManualClock implements Clock {
  constructor(private current = Date.parse("2026-01-01T00:00:00.000Z")) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
