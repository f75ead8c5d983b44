import { describe, expect, it } from "vitest";
import { mergeSeries } from "./lib/claim-load.ts";
import { planBuffers } from "./lib/claim-plan.ts";
import { compareSets, countDuplicates, headAndTail, perSecond } from "./lib/claim-stats.ts";

describe("countDuplicates", () => {
  it("counts nothing when every id comes once", () => {
    expect(countDuplicates(["dr_1", "dr_2", "dr_3"])).toEqual({ distinct: 3, duplicates: 0, repeated: [] });
  });

  it("counts every hand-out beyond the first of an id", () => {
    const result = countDuplicates(["dr_1", "dr_2", "dr_1", "dr_3", "dr_1", "dr_2"]);
    expect(result.distinct).toBe(3);
    expect(result.duplicates).toBe(3);
    expect(result.repeated).toEqual([
      { id: "dr_1", times: 3 },
      { id: "dr_2", times: 2 },
    ]);
  });

  it("keeps only the first few repeated ids", () => {
    const ids = Array.from({ length: 20 }, (_, i) => `dr_${i}`);
    const result = countDuplicates([...ids, ...ids], 5);
    expect(result.duplicates).toBe(20);
    expect(result.repeated).toHaveLength(5);
  });

  it("handles no ids", () => {
    expect(countDuplicates([])).toEqual({ distinct: 0, duplicates: 0, repeated: [] });
  });
});

describe("compareSets", () => {
  it("finds what was never handed out and what was not expected", () => {
    expect(compareSets(["ex_1", "ex_2", "ex_3"], ["ex_2", "ex_3", "ex_3", "ex_9"])).toEqual({
      missing: 1,
      unexpected: 1,
    });
  });

  it("is empty both ways when the sets match", () => {
    expect(compareSets(["ex_1", "ex_2"], ["ex_2", "ex_1"])).toEqual({ missing: 0, unexpected: 0 });
  });
});

describe("headAndTail", () => {
  it("takes percentiles of the first and last fraction, in the order taken", () => {
    // 100 times, 0..99 ms in order: the first ten are 0..9 ms, the last ten 90..99 ms.
    const times = Array.from({ length: 100 }, (_, i) => i);
    const { head, tail } = headAndTail(times, 0.1);
    expect(head).toEqual({ p50: 4, p99: 9 });
    expect(tail).toEqual({ p50: 94, p99: 99 });
  });

  it("takes at least one value", () => {
    expect(headAndTail([3, 7], 0.1)).toEqual({ head: { p50: 3, p99: 3 }, tail: { p50: 7, p99: 7 } });
  });

  it("is NaN for no values", () => {
    const { head } = headAndTail([], 0.1);
    expect(head.p50).toBeNaN();
  });
});

describe("perSecond", () => {
  it("divides by the wall time in seconds", () => {
    expect(perSecond(500, 2000)).toBe(250);
  });

  it("is NaN when no time passed", () => {
    expect(perSecond(5, 0)).toBeNaN();
  });
});

describe("mergeSeries", () => {
  it("adds the times and wall times, and weighs CPU by wall time", () => {
    const a = {
      times: [1, 2],
      ms: 1000,
      cpu: { serverPercent: 90, clientPercent: 10, databasePercent: 20, otherPercent: 0 },
      cutShort: false,
    };
    const b = {
      times: [3],
      ms: 3000,
      cpu: { serverPercent: 50, clientPercent: 30, databasePercent: 40, otherPercent: undefined },
      cutShort: true,
    };
    expect(mergeSeries(a, b)).toEqual({
      times: [1, 2, 3],
      ms: 4000,
      cpu: { serverPercent: 60, clientPercent: 25, databasePercent: 35, otherPercent: undefined },
      cutShort: true,
    });
  });
});

describe("planBuffers", () => {
  const plan = (lines: string[]) => ({ statement: { sql: "", parameters: [] }, plan: lines, problems: [] });

  it("adds hits and reads of the top node", () => {
    expect(
      planBuffers(
        plan([
          "Limit  (cost=0.41..8.44 rows=1 width=210) (actual rows=0 loops=1)",
          "  Buffers: shared hit=120 read=7",
          "  ->  LockRows  (cost=0.41..8.44 rows=1 width=210) (actual rows=0 loops=1)",
          "        Buffers: shared hit=1",
        ]),
      ),
    ).toBe(127);
  });

  it("is undefined without buffer counts (SQLite)", () => {
    expect(planBuffers(plan(["SEARCH device_runs USING INDEX device_runs_claim_idx"]))).toBeUndefined();
  });
});
