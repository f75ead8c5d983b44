import { describe, expect, it } from "vitest";
import { autoShards } from "./auto-shards.ts";

const minute = 60_000;

describe('shards: "auto" (API.md §13)', () => {
  it("divides the tests' time by the target, rounding up, and caps it by the matching devices online", () => {
    expect(
      autoShards({ testsMs: 19 * minute, targetMinutes: 5, maxShards: 10, matchingDevicesOnline: 3 }),
    ).toEqual({
      count: 3,
      reason: "19 min of tests ÷ 5 min = 4 shards; 3 matching devices online → 3",
    });
  });

  it("takes the quotient when enough devices are online, and says how many were", () => {
    expect(
      autoShards({ testsMs: 19 * minute, targetMinutes: 5, maxShards: 10, matchingDevicesOnline: 6 }),
    ).toEqual({
      count: 4,
      reason: "19 min of tests ÷ 5 min = 4 shards; 6 matching devices online",
    });
  });

  it("caps it by max_shards before the devices", () => {
    expect(
      autoShards({ testsMs: 200 * minute, targetMinutes: 10, maxShards: 8, matchingDevicesOnline: 12 }),
    ).toEqual({
      count: 8,
      reason: "200 min of tests ÷ 10 min = 20 shards; max_shards 8 → 8; 12 matching devices online",
    });
  });

  it("gives a plan without history max_shards, still capped by the devices online", () => {
    expect(autoShards({ testsMs: null, targetMinutes: 10, maxShards: 10, matchingDevicesOnline: 3 })).toEqual(
      {
        count: 3,
        reason: "no test history for this plan yet: max_shards 10; 3 matching devices online → 3",
      },
    );
  });

  it("makes one shard for tests shorter than the target, and for tests that took no time", () => {
    expect(
      autoShards({ testsMs: 90_000, targetMinutes: 10, maxShards: 10, matchingDevicesOnline: 4 }),
    ).toEqual({
      count: 1,
      reason: "1.5 min of tests ÷ 10 min = 1 shard; 4 matching devices online",
    });
    expect(autoShards({ testsMs: 0, targetMinutes: 10, maxShards: 10, matchingDevicesOnline: 4 }).count).toBe(
      1,
    );
  });

  it("still makes one run when no matching device is online: it waits for one", () => {
    expect(
      autoShards({ testsMs: 30 * minute, targetMinutes: 10, maxShards: 10, matchingDevicesOnline: 0 }),
    ).toEqual({
      count: 1,
      reason: "30 min of tests ÷ 10 min = 3 shards; no matching device online → 1",
    });
  });

  it("rounds a quotient just above a whole number up", () => {
    expect(
      autoShards({ testsMs: 10 * minute + 1, targetMinutes: 10, maxShards: 10, matchingDevicesOnline: 10 })
        .count,
    ).toBe(2);
  });
});
