import { describe, expect, it } from "vitest";
import { defaultPacingPolicy } from "../sdk/pacing.ts";
import { nextPollDelayMs, pollSchedule } from "./wait.ts";

/** The pauses before the first `n` polls. */
function schedule(n: number): number[] {
  const delays: number[] = [pollSchedule.firstMs];
  while (delays.length < n) delays.push(nextPollDelayMs(delays.at(-1) ?? 0));
  return delays;
}

describe("the wait's poll schedule", () => {
  it("polls at 250 ms, doubles to 2 s, then grows by half up to 15 s and stays there", () => {
    expect(schedule(12)).toEqual([250, 500, 1000, 2000, 3000, 4500, 6750, 10125, 15000, 15000, 15000, 15000]);
  });

  it("stays far below the rate limit: at most 2 polls in any second (the limit refills 4), fewer than a burst in the first minute", () => {
    const at: number[] = [];
    let t = 0;
    for (const delay of schedule(40)) {
      t += delay;
      at.push(t);
    }
    for (const start of at)
      expect(at.filter((p) => p >= start && p < start + 1000).length).toBeLessThanOrEqual(2);
    expect(at.filter((p) => p < 60_000).length).toBeLessThan(defaultPacingPolicy.burst);
  });
});
