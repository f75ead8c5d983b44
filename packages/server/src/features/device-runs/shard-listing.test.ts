import { describe, expect, it } from "vitest";
import { planStep, sameTests } from "./shard-listing.ts";
import { testKey } from "./shard-plan.ts";

const test = (name: string) => ({ classname: "com.example.T", name });
const listed = ["a", "b", "c", "d", "e"].map(test);

describe("planStep", () => {
  it("uniform: one batch per shard fixed to it, seq = shard, none for a shard without tests", () => {
    const plan = planStep([...listed, test("a")], 3, "uniform", new Map());
    expect(plan.tests).toEqual(listed);
    expect(plan.batches).toEqual([
      { seq: 0, shard: 0, tests: [test("a"), test("b")], expectedMs: 0 },
      { seq: 1, shard: 1, tests: [test("c"), test("d")], expectedMs: 0 },
      { seq: 2, shard: 2, tests: [test("e")], expectedMs: 0 },
    ]);
    expect(planStep(listed.slice(0, 1), 3, "uniform", new Map()).batches).toHaveLength(1);
  });

  it("duration: a shared queue (shard null) in seq order, longest first, covering every test once", () => {
    const expected = new Map([[testKey(test("e")), 120_000]]);
    const plan = planStep(listed, 2, "duration", expected);
    expect(plan.batches.map((batch) => batch.seq)).toEqual(plan.batches.map((_, i) => i));
    expect(plan.batches.every((batch) => batch.shard === null)).toBe(true);
    expect(plan.batches[0]).toMatchObject({ tests: [test("e")], expectedMs: 120_000 });
    const all = plan.batches.flatMap((batch) => batch.tests.map(testKey));
    expect(all.sort()).toEqual(listed.map(testKey).sort());
  });

  it("plans no batch for an empty listing", () => {
    expect(planStep([], 3, "duration", new Map()).batches).toEqual([]);
    expect(planStep([], 3, "uniform", new Map()).batches).toEqual([]);
  });
});

describe("sameTests", () => {
  it("is true for the same set in any order, with repeats", () => {
    expect(sameTests(listed, [...listed].reverse())).toBe(true);
    expect(sameTests(listed, [...listed, test("a")])).toBe(true);
  });

  it("is false when a test is missing or added", () => {
    expect(sameTests(listed, listed.slice(1))).toBe(false);
    expect(sameTests(listed, [...listed.slice(1), test("f")])).toBe(false);
    expect(sameTests(listed, [...listed, test("f")])).toBe(false);
  });
});
