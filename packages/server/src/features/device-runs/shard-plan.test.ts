import { describe, expect, it } from "vitest";
import {
  distinctTests,
  durationBatches,
  type ListedTest,
  p80,
  testKey,
  UNKNOWN_TEST_MS,
  uniformShards,
} from "./shard-plan.ts";

const test = (name: string, classname = "com.example.LoginTest"): ListedTest => ({ classname, name });
const listed = (count: number) => Array.from({ length: count }, (_, i) => test(`test${i}`));
const keys = (tests: readonly ListedTest[]) => tests.map(testKey);

/** Every listed test exactly once over all the lists. */
function expectPartition(lists: readonly (readonly ListedTest[])[], tests: readonly ListedTest[]) {
  const all = lists.flatMap(keys);
  expect(new Set(all).size).toBe(all.length);
  expect([...all].sort()).toEqual(keys(distinctTests(tests)).sort());
}

describe("p80", () => {
  it("is the nearest-rank 80th percentile, whatever the order of the durations", () => {
    expect(p80([50, 10, 40, 20, 30])).toBe(40);
    expect(p80([1000, 3000, 2000, 5000, 4000, 6000, 7000, 8000, 9000, 10000])).toBe(8000);
    expect(p80([7])).toBe(7);
  });

  it("is null without durations, and leaves its input as it was", () => {
    expect(p80([])).toBeNull();
    const durations = [3, 1, 2];
    p80(durations);
    expect(durations).toEqual([3, 1, 2]);
  });
});

describe("distinctTests", () => {
  it("keeps the first of a repeated test, in listed order; the same name in another class is another test", () => {
    const tests = [test("a"), test("b"), test("a"), test("a", "com.example.Other"), test("b")];
    expect(distinctTests(tests)).toEqual([test("a"), test("b"), test("a", "com.example.Other")]);
  });
});

describe("uniformShards", () => {
  it("splits the listed order into contiguous lists whose sizes differ by at most one", () => {
    const tests = listed(10);
    const lists = uniformShards(tests, 4);
    expect(lists.map((list) => list.length)).toEqual([3, 3, 2, 2]);
    expect(lists.flat()).toEqual(tests);
    expectPartition(lists, tests);
  });

  it("gives every shard a list, empty ones when there are more shards than tests", () => {
    const lists = uniformShards(listed(2), 5);
    expect(lists.map((list) => list.length)).toEqual([1, 1, 0, 0, 0]);
  });

  it("puts a single test on the first shard", () => {
    expect(uniformShards([test("only")], 3)).toEqual([[test("only")], [], []]);
  });

  it("is the same plan every time for the same listing", () => {
    const tests = listed(37);
    expect(uniformShards(tests, 6)).toEqual(uniformShards([...tests], 6));
  });

  it("runs a test listed twice once", () => {
    const tests = [test("a"), test("b"), test("a"), test("c")];
    const lists = uniformShards(tests, 2);
    expect(lists).toEqual([[test("a"), test("b")], [test("c")]]);
    expectPartition(lists, tests);
  });

  it("refuses a shard count that is not a positive integer", () => {
    expect(() => uniformShards(listed(3), 0)).toThrow(RangeError);
    expect(() => uniformShards(listed(3), 1.5)).toThrow(RangeError);
  });
});

describe("durationBatches", () => {
  /** Durations in seconds by test name, as the expected-duration map the planner takes. */
  const expected = (seconds: Record<string, number>) =>
    new Map(Object.entries(seconds).map(([name, s]) => [testKey(test(name)), s * 1000]));

  it("covers the listed set exactly once", () => {
    const tests = listed(200);
    const history = new Map(tests.map((t, i) => [testKey(t), ((i * 7919) % 60_000) + 1_000]));
    const batches = durationBatches(tests, 4, history);
    expectPartition(
      batches.map((batch) => batch.tests),
      tests,
    );
  });

  it("orders the queue longest first, within and across batches", () => {
    const tests = listed(60);
    const history = new Map(tests.map((t, i) => [testKey(t), ((i * 37) % 50) * 1000 + 500]));
    const order = durationBatches(tests, 3, history).flatMap((batch) => batch.tests);
    const durations = order.map((t) => history.get(testKey(t)) ?? 0);
    expect(durations).toEqual([...durations].sort((a, b) => b - a));
  });

  it("makes the first batches large and the last ones single tests", () => {
    const tests = listed(200);
    const history = new Map(tests.map((t) => [testKey(t), 10_000]));
    const batches = durationBatches(tests, 4, history, { batchOverheadMs: 2_000 });
    // remaining ÷ (2 × 4) of 2,000 s: 25 tests of 10 s.
    expect(batches[0]?.tests).toHaveLength(25);
    // The floor is √(2,000 s × 2 s ÷ 4) ≈ 31.6 s: three 10 s tests.
    expect(batches.at(-1)?.tests.length).toBeLessThanOrEqual(3);
    const sizes = batches.map((batch) => batch.tests.length);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    // Far fewer runner starts than tests.
    expect(batches.length).toBeLessThan(60);
  });

  it("puts a test longer than a batch's share in a batch of its own", () => {
    const tests = [test("slow"), test("a"), test("b"), test("c")];
    const batches = durationBatches(tests, 2, expected({ slow: 600, a: 10, b: 10, c: 10 }));
    expect(batches[0]).toEqual({ tests: [test("slow")], expectedMs: 600_000 });
  });

  it("expects 15 s of a test never seen, and keeps the listed order among equal durations", () => {
    const tests = [test("new1"), test("known"), test("new2")];
    const batches = durationBatches(tests, 1, expected({ known: 20 }), { batchOverheadMs: 0, factor: 100 });
    expect(batches).toEqual([
      { tests: [test("known")], expectedMs: 20_000 },
      { tests: [test("new1")], expectedMs: UNKNOWN_TEST_MS },
      { tests: [test("new2")], expectedMs: UNKNOWN_TEST_MS },
    ]);
  });

  it("is the same queue every time for the same listing and history", () => {
    const tests = listed(50);
    const history = new Map(tests.map((t, i) => [testKey(t), (i % 7) * 3000]));
    expect(durationBatches(tests, 5, history)).toEqual(durationBatches([...tests], 5, new Map(history)));
  });

  it("plans one test as one batch, and more shards than tests as fewer batches than shards", () => {
    expect(durationBatches([test("only")], 4, new Map())).toEqual([
      { tests: [test("only")], expectedMs: UNKNOWN_TEST_MS },
    ]);
    const batches = durationBatches(listed(3), 10, new Map());
    expect(batches.length).toBeLessThanOrEqual(3);
    expectPartition(
      batches.map((batch) => batch.tests),
      listed(3),
    );
  });

  it("plans nothing for an empty listing", () => {
    expect(durationBatches([], 3, new Map())).toEqual([]);
  });

  it("runs a test listed twice once", () => {
    const tests = [test("a"), test("b"), test("a")];
    const batches = durationBatches(tests, 2, expected({ a: 5, b: 5 }));
    expectPartition(
      batches.map((batch) => batch.tests),
      tests,
    );
    expect(batches.flatMap((batch) => batch.tests)).toHaveLength(2);
  });

  it("refuses a shard count that is not a positive integer", () => {
    expect(() => durationBatches(listed(3), 0, new Map())).toThrow(RangeError);
  });
});
