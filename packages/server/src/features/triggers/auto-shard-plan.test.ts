import { describe, expect, it } from "vitest";
import { planShards } from "./auto-shard-plan.ts";

const minute = 60_000;
const maestro = (options: Record<string, unknown> = {}) => ({ type: "maestro", ...options });
const device = (serial: string, facts: Record<string, unknown> = {}) => ({
  serial,
  platform: "android",
  model: "Pixel 7",
  os_version: "14",
  ...facts,
});

describe("planShards", () => {
  it("reads no facts and keeps the fixed shards when no step asks for auto", async () => {
    const plan = await planShards([maestro({ shards: 3 })], [{ platform: "android" }], () => {
      throw new Error("read");
    });
    expect(plan.entries).toEqual([{ count: 3 }]);
  });

  it("gives each entry its own count from the devices that match it, and the step the largest as a number", async () => {
    const online = [
      {
        stepTypes: ["inspect", "maestro"],
        devices: [
          device("a", { api_level: 34 }),
          device("b", { api_level: 34 }),
          device("c", { api_level: 33 }),
          device("d", { api_level: 34, state: "failed" }),
        ],
      },
      // Offers no maestro: its devices do not count.
      { stepTypes: ["inspect"], devices: [device("e", { api_level: 34 })] },
    ];
    const plan = await planShards(
      [{ type: "inspect" }, maestro({ shards: "auto", target_minutes: 5 })],
      [{ platform: "android", api_level_min: 34 }, { platform: "android" }],
      async () => ({ testsMs: 19 * minute, online }),
    );
    expect(plan.entries).toEqual([
      {
        count: 2,
        planned: { count: 2, reason: "19 min of tests ÷ 5 min = 4 shards; 2 matching devices online → 2" },
      },
      {
        count: 3,
        planned: { count: 3, reason: "19 min of tests ÷ 5 min = 4 shards; 3 matching devices online → 3" },
      },
    ]);
    expect(plan.steps).toEqual([{ type: "inspect" }, maestro({ shards: 3, target_minutes: 5 })]);
  });

  it("keeps more fixed shards of another step, and counts online agents for a plan without devices", async () => {
    const plan = await planShards(
      [maestro({ shards: "auto", max_shards: 4 }), { type: "instrumentation", shards: 5 }],
      [null],
      async () => ({
        testsMs: null,
        online: [
          { stepTypes: ["maestro", "instrumentation"], devices: [] },
          { stepTypes: ["maestro", "instrumentation"], devices: [] },
          { stepTypes: ["maestro"], devices: [] },
        ],
      }),
    );
    expect(plan.entries).toEqual([
      {
        count: 5,
        planned: {
          count: 2,
          reason: "no test history for this plan yet: max_shards 4; 2 matching devices online → 2",
        },
      },
    ]);
    expect(plan.steps[0]).toEqual(maestro({ shards: 2, max_shards: 4 }));
  });
});
