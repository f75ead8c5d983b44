import { setTimeout as delay } from "node:timers/promises";

/** Waits `ms`, or less if `signal` fires first; never rejects (a stop ends the wait, the caller looks why). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).then(
    () => undefined,
    () => undefined,
  );
}
