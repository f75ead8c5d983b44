import { describe, expect, it } from "vitest";
import { runsOnShard, shardCount, shardingOf, stepShards } from "./plan-shards.ts";

const inspect = { type: "inspect" };
const shell = { type: "shell" };
const instrumentation = (shards?: number) => ({ type: "instrumentation", shards });
const maestro = (shards?: number) => ({ type: "maestro", shards });

describe("shardCount: device runs per device entry", () => {
  it("is 1 without shards", () => {
    expect(shardCount([])).toBe(1);
    expect(shardCount([inspect, instrumentation(), maestro()])).toBe(1);
  });

  it("is the largest shards among the steps that split tests", () => {
    expect(shardCount([inspect, instrumentation(3), maestro(5)])).toBe(5);
    expect(shardCount([maestro(2), instrumentation(4)])).toBe(4);
  });

  it("ignores shards on steps that do not split tests", () => {
    expect(shardCount([{ type: "shell", shards: 7 }])).toBe(1);
  });
});

describe("runsOnShard (rule 1: no result counted twice)", () => {
  it("runs inspect and shell steps on shard 0 only", () => {
    for (const step of [inspect, shell]) {
      expect(runsOnShard(step, 0)).toBe(true);
      expect(runsOnShard(step, 1)).toBe(false);
    }
  });

  it("runs a step with shards k on shards below k", () => {
    expect([0, 1, 2, 3].map((shard) => runsOnShard(instrumentation(3), shard))).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect([0, 1].map((shard) => runsOnShard(maestro(), shard))).toEqual([true, false]);
  });
});

describe("stepShards and shardingOf", () => {
  it("reads a step's own shards, 1 for what is not a positive integer", () => {
    expect(stepShards(instrumentation(50))).toBe(50);
    expect(stepShards(instrumentation(0))).toBe(1);
    expect(stepShards({ type: "maestro", shards: 2.5 })).toBe(1);
  });

  it("defaults to duration sharding", () => {
    expect(shardingOf(maestro(2))).toBe("duration");
    expect(shardingOf({ type: "maestro", sharding: "uniform" })).toBe("uniform");
  });
});
