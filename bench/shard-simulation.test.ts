import { describe, expect, it } from "vitest";
import { idealMs, simulate } from "./lib/shard-simulation.ts";

const durations = (ms: Record<string, number>) => new Map(Object.entries(ms));

describe("simulate", () => {
  it("runs exact lists on their own devices, one runner start per non-empty list", () => {
    const result = simulate(
      { kind: "lists", lists: [["a", "b"], ["c"], []] },
      durations({ a: 10, b: 20, c: 5 }),
      [1, 1, 1],
      2,
    );
    expect(result.devices).toEqual([
      { busyMs: 32, batches: 1, tests: 2 },
      { busyMs: 7, batches: 1, tests: 1 },
      { busyMs: 0, batches: 0, tests: 0 },
    ]);
    expect(result.wallMs).toBe(32);
  });

  it("gives the next batch of the queue to the device that is free first, the lower index on a tie", () => {
    const result = simulate(
      { kind: "queue", batches: [["a"], ["b"], ["c"], ["d"]] },
      durations({ a: 10, b: 4, c: 3, d: 3 }),
      [1, 1],
      0,
    );
    // a → device 0 (0–10); b → device 1 (0–4); c → device 1 (4–7); d → device 1 (7–10).
    expect(result.devices.map((device) => device.busyMs)).toEqual([10, 10]);
    expect(result.devices.map((device) => device.tests)).toEqual([1, 3]);
    expect(result.wallMs).toBe(10);
  });

  it("slows everything a slow device does, its runner starts included", () => {
    const result = simulate(
      { kind: "lists", lists: [["a"], ["b"]] },
      durations({ a: 10, b: 10 }),
      [1, 0.5],
      2,
    );
    expect(result.devices.map((device) => device.busyMs)).toEqual([12, 24]);
  });

  it("lets the fast devices take the queue while a slow one works on its batch", () => {
    const plan = { kind: "queue" as const, batches: [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]] };
    const result = simulate(plan, durations({ a: 10, b: 10, c: 10, d: 10, e: 10, f: 10 }), [0.5, 1], 0);
    // The fast device runs twice as many: a on device 0 (0–20), b and c on device 1 (0–20), then d on
    // device 0 (20–40) while device 1 runs e and f (20–40).
    expect(result.devices.map((device) => device.tests)).toEqual([2, 4]);
    expect(result.wallMs).toBe(40);
  });

  it("refuses a plan that names a test without a duration, and lists that do not match the devices", () => {
    expect(() => simulate({ kind: "queue", batches: [["x"]] }, durations({}), [1], 0)).toThrow(/"x"/);
    expect(() => simulate({ kind: "lists", lists: [["a"]] }, durations({ a: 1 }), [1, 1], 0)).toThrow(
      /1 lists for 2 devices/,
    );
    expect(() => simulate({ kind: "lists", lists: [[]] }, durations({}), [0], 0)).toThrow(/speed/);
  });
});

describe("idealMs", () => {
  it("is the work spread over the devices, or the longest test when that is longer", () => {
    expect(idealMs(durations({ a: 20, b: 20, c: 20, d: 20, e: 20 }), [1, 1, 1, 1])).toBe(25);
    expect(idealMs(durations({ a: 90, b: 5, c: 5 }), [1, 1, 1, 1])).toBe(90);
  });

  it("counts a device at half speed as half a device", () => {
    const seven = durations({ a: 10, b: 10, c: 10, d: 10, e: 10, f: 10, g: 10 });
    expect(idealMs(seven, [1, 1, 1, 0.5])).toBe(20);
  });
});
