import { describe, expect, it } from "vitest";
import type { FinalTestCase } from "./test-history.repo.ts";
import { percentile, testHistories } from "./test-history.ts";

const window = [
  { id: "ex_3", createdAt: "2026-11-24T03:00:00.000Z" },
  { id: "ex_2", createdAt: "2026-11-24T02:00:00.000Z" },
  { id: "ex_1", createdAt: "2026-11-24T01:00:00.000Z" },
];
const result = (
  executionId: string,
  name: string,
  status: FinalTestCase["status"],
  extra: Partial<FinalTestCase> = {},
) => ({
  executionId,
  classname: "com.example.LoginTest",
  name,
  status,
  durationMs: 1000,
  failedBefore: false,
  ...extra,
});

describe("percentile", () => {
  it("takes the nearest rank, and null without durations", () => {
    expect(percentile([10, 20, 30, 40, 50], 0.5)).toBe(30);
    expect(percentile([10, 20, 30, 40, 50], 0.8)).toBe(40);
    expect(percentile([10, 20], 0.5)).toBe(10);
    expect(percentile([7], 0.8)).toBe(7);
    expect(percentile([], 0.5)).toBeNull();
  });
});

describe("testHistories", () => {
  it("counts an execution once when the test ran on several devices, a failure on one over a pass on another", () => {
    const [signsIn] = testHistories("tp_1", window, [
      result("ex_3", "signsIn", "passed", { durationMs: 100 }),
      result("ex_3", "signsIn", "failed", { durationMs: 300 }),
      result("ex_2", "signsIn", "passed", { failedBefore: true, durationMs: 200 }),
      result("ex_2", "signsIn", "passed", { durationMs: 400 }),
    ]);
    expect(signsIn).toMatchObject({
      runs: 2,
      failures: 1,
      flaky_runs: 1,
      flaky_rate: 0.5,
      p50_ms: 200,
      p80_ms: 400,
      last_status: "failed",
      last_execution_id: "ex_3",
      first_seen_at: window[1]?.createdAt,
      new: false,
    });
  });

  it("calls a test new only when the newest execution is the only one it ran in", () => {
    const histories = testHistories("tp_1", window, [
      result("ex_3", "added", "failed"),
      result("ex_2", "dropped", "passed"),
    ]);
    expect(histories.map((t) => [t.name, t.new, t.last_run_at])).toEqual([
      ["added", true, window[0]?.createdAt],
      ["dropped", false, window[1]?.createdAt],
    ]);
  });

  it("does not count a run that failed on one device and passed after failing on another as flaky", () => {
    const [test] = testHistories("tp_1", window, [
      result("ex_1", "signsIn", "passed", { failedBefore: true }),
      result("ex_1", "signsIn", "errored"),
    ]);
    expect(test).toMatchObject({ runs: 1, failures: 1, flaky_runs: 0, last_status: "errored" });
  });
});
