/** The agent's reconnection waits (docs/appium-relay.md, "The channel"): 0.5 s doubling to 5 s, with jitter. */
export interface BackoffTimes {
  initialMs: number;
  maxMs: number;
}

export const defaultBackoffTimes: BackoffTimes = { initialMs: 500, maxMs: 5000 };

/**
 * The wait before reconnection attempt `attempt` (0 for the first after a drop): the doubled step, capped, of which
 * a random half is waited ("equal jitter"). Agents that lost the server at the same moment (a restart, a deploy)
 * come back spread over the step rather than all at once, and none waits less than half of it.
 */
export function reconnectDelayMs(
  attempt: number,
  random: () => number = Math.random,
  times: BackoffTimes = defaultBackoffTimes,
): number {
  const step = Math.min(times.maxMs, times.initialMs * 2 ** Math.min(attempt, 30));
  return step / 2 + random() * (step / 2);
}
