import { describe, expect, it } from "vitest";
import { addSummaries, attemptStatus, executionStatus, summarize } from "./run-outcome.ts";

describe("run outcome", () => {
  it("counts errored test cases as failed", () => {
    expect(summarize(["passed", "failed", "errored", "skipped", "passed"])).toEqual({
      tests: 5,
      passed: 2,
      failed: 2,
      skipped: 1,
      flaky: 0,
    });
  });

  it("turns a passed report with failed tests into failed", () => {
    expect(attemptStatus("passed", summarize(["passed", "failed"]))).toBe("failed");
    expect(attemptStatus("passed", summarize(["passed", "skipped"]))).toBe("passed");
    expect(attemptStatus("errored", summarize([]))).toBe("errored");
  });

  it("derives the execution status from its device runs", () => {
    expect(executionStatus([{ status: "queued" }, { status: "queued" }])).toBe("queued");
    expect(executionStatus([{ status: "passed" }, { status: "queued" }])).toBe("running");
    expect(executionStatus([{ status: "passed" }, { status: "errored" }])).toBe("errored");
    expect(executionStatus([{ status: "errored" }, { status: "failed" }])).toBe("failed");
    expect(executionStatus([{ status: "failed" }, { status: "cancelled" }])).toBe("cancelled");
    expect(executionStatus([{ status: "passed" }, { status: "passed" }])).toBe("passed");
  });

  it("adds the latest attempts' summaries and keeps the flaky count given", () => {
    expect(addSummaries([summarize(["passed"]), null, summarize(["failed", "skipped"])], 1)).toEqual({
      tests: 3,
      passed: 1,
      failed: 1,
      skipped: 1,
      flaky: 1,
    });
  });
});
