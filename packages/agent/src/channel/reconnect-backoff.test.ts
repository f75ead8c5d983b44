import { describe, expect, it } from "vitest";
import { reconnectDelayMs } from "./reconnect-backoff.ts";

describe("reconnectDelayMs", () => {
  it("doubles from 0.5 s to at most 5 s", () => {
    const most = (attempt: number) => reconnectDelayMs(attempt, () => 1);
    expect([0, 1, 2, 3, 4, 5, 50].map(most)).toEqual([500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });

  it("waits a random part of the upper half of each step", () => {
    expect(reconnectDelayMs(0, () => 0)).toBe(250);
    expect(reconnectDelayMs(0, () => 0.5)).toBe(375);
    expect(reconnectDelayMs(10, () => 0)).toBe(2500);
    expect(reconnectDelayMs(10, () => 0.2)).toBe(3000);
  });

  it("spreads agents that reconnect at once", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const delays = new Set(Array.from({ length: 20 }, () => Math.round(reconnectDelayMs(3, random))));
    expect(delays.size).toBeGreaterThan(15);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(2000);
  });
});
