import { describe, expect, it } from "vitest";
import type { ExecutionStatus } from "../../db/schema.ts";
import { addSummaries, executionStatus, tally } from "./execution-outcome.ts";

const of = (statuses: ExecutionStatus[], started = true) =>
  executionStatus(tally(statuses.map((status) => ({ status }))), started);

describe("execution outcome", () => {
  it("is queued until a run starts, then running until all end", () => {
    expect(of(["queued", "queued"], false)).toBe("queued");
    expect(of([], false)).toBe("queued");
    expect(of(["running", "queued"], false)).toBe("running");
    expect(of(["passed", "queued"])).toBe("running");
  });

  it("stays running once started while a run waits for another attempt", () => {
    expect(of(["queued"], true)).toBe("running");
  });

  it("takes the most telling ending once all runs ended", () => {
    expect(of(["passed", "errored"])).toBe("errored");
    expect(of(["errored", "failed"])).toBe("failed");
    expect(of(["failed", "cancelled"])).toBe("cancelled");
    expect(of(["passed", "passed"])).toBe("passed");
  });

  it("adds the runs' summaries, flaky included, skipping runs without one", () => {
    const run = { tests: 2, passed: 1, failed: 1, skipped: 0, flaky: 1, quarantined_failures: 1 };
    // A summary stored before quarantine existed has no quarantined_failures: none.
    expect(addSummaries([run, null, { tests: 1, passed: 0, failed: 0, skipped: 1, flaky: 0 }])).toEqual({
      tests: 3,
      passed: 1,
      failed: 1,
      skipped: 1,
      flaky: 1,
      quarantined_failures: 1,
    });
  });
});
