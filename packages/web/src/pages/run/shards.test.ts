import { describe, expect, it } from "vitest";
import type { DeviceRun, TestCase } from "../../api/types.ts";
import { deviceLabel } from "./device-label.ts";
import { deviceEntries, shardCounts, shardLabel } from "./shards.ts";

const run = (model: string, shard: number): DeviceRun => ({
  device: { platform: "android", model },
  shard,
  status: "passed",
  attempt: 1,
  reason: null,
  summary: null,
  agent_id: null,
  claimed_device: null,
  started_at: null,
  finished_at: null,
  steps: [],
  shards_planned: null,
  setup_ms: null,
});

const test = (position: number, shard: number): TestCase => ({
  id: "t_1",
  classname: "com.example.CartTest",
  name: "addsItem",
  status: "passed",
  flaky: false,
  quarantined: false,
  duration_ms: 1200,
  message: null,
  stack_trace: null,
  device: { position, platform: "android", serial: "emulator-5554", model: "Pixel 8", os_version: "14" },
  shard,
  attempt: 1,
  attempts: [],
  artifacts: [],
  video_offset_ms: null,
});

describe("device runs by device entry", () => {
  it("groups an entry's shards, each entry starting at its shard 0", () => {
    const devices = [run("Pixel 8", 0), run("Pixel 8", 1), run("Pixel 8", 2), run("Galaxy S23", 0)];
    const entries = deviceEntries(devices);
    expect(entries.map((entry) => [entry.position, entry.runs.map((r) => r.shard)])).toEqual([
      [0, [0, 1, 2]],
      [1, [0]],
    ]);
    expect(shardCounts(devices)).toEqual([3, 1]);
  });

  it("keeps two unsharded entries of the same device apart", () => {
    expect(shardCounts([run("Pixel 8", 0), run("Pixel 8", 0)])).toEqual([1, 1]);
    expect(deviceEntries([])).toEqual([]);
  });
});

describe("shard labels", () => {
  it("counts shards from 1 and says nothing of an unsharded run", () => {
    expect(shardLabel(1, 3)).toBe("Shard 2 of 3");
    expect(shardLabel(0, 3)).toBe("Shard 1 of 3");
    expect(shardLabel(0, 1)).toBeUndefined();
    expect(shardLabel(0, undefined)).toBeUndefined();
    expect(shardLabel(2, undefined)).toBe("Shard 3");
  });

  it("names a test's shard beside its device in the tests table", () => {
    expect(deviceLabel(test(0, 1), [3, 1])).toBe("Pixel 8 · 14 · shard 2 of 3");
    expect(deviceLabel(test(1, 0), [3, 1])).toBe("Pixel 8 · 14");
    expect(deviceLabel(test(0, 2))).toBe("Pixel 8 · 14 · shard 3");
  });
});
