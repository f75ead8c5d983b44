import { describe, expect, it } from "vitest";
import type { TestCaseStatus } from "../../db/schema.ts";
import { attemptSummary, isFlaky, type TestReport } from "./test-summary.ts";

const report = (name: string, status: TestCaseStatus, attempt = 1): TestReport => ({
  classname: "com.example.LoginTest",
  name,
  attempt,
  status,
});

describe("test summary", () => {
  it("counts errored tests as failed", () => {
    const reports = [
      report("a", "passed"),
      report("b", "failed"),
      report("c", "errored"),
      report("d", "skipped"),
    ];
    expect(attemptSummary(reports, 1)).toEqual({
      tests: 4,
      passed: 1,
      failed: 2,
      skipped: 1,
      flaky: 0,
      quarantined_failures: 0,
    });
  });

  it("counts a test reported several times once, with its last status", () => {
    const reports = [report("a", "failed"), report("b", "passed"), report("a", "passed")];
    expect(attemptSummary(reports, 1)).toEqual({
      tests: 2,
      passed: 2,
      failed: 0,
      skipped: 0,
      flaky: 1,
      quarantined_failures: 0,
    });
  });

  it("is flaky only when it passed after failing, not when it failed after passing", () => {
    expect(isFlaky([{ status: "failed" }, { status: "passed" }])).toBe(true);
    expect(isFlaky([{ status: "errored" }, { status: "passed" }])).toBe(true);
    expect(isFlaky([{ status: "passed" }, { status: "failed" }])).toBe(false);
    expect(isFlaky([{ status: "skipped" }, { status: "passed" }])).toBe(false);
    expect(isFlaky([{ status: "passed" }])).toBe(false);
    expect(isFlaky([])).toBe(false);
    const passThenFail = [report("a", "passed"), report("a", "failed")];
    expect(attemptSummary(passThenFail, 1)).toEqual({
      tests: 1,
      passed: 0,
      failed: 1,
      skipped: 0,
      flaky: 0,
      quarantined_failures: 0,
    });
  });

  it("counts a test failing on an earlier attempt of the run and passing on this one as flaky", () => {
    const reports = [report("a", "failed", 1), report("b", "failed", 1), report("a", "passed", 2)];
    // b did not come back on attempt 2: history, not a result of it.
    expect(attemptSummary(reports, 2)).toEqual({
      tests: 1,
      passed: 1,
      failed: 0,
      skipped: 0,
      flaky: 1,
      quarantined_failures: 0,
    });
    expect(attemptSummary(reports.slice(0, 2), 1)).toEqual({
      tests: 2,
      passed: 0,
      failed: 2,
      skipped: 0,
      flaky: 0,
      quarantined_failures: 0,
    });
  });

  it("counts a quarantined test's final failure in failed and in quarantined_failures, its pass in neither", () => {
    const quarantined = (name: string, status: TestCaseStatus): TestReport => ({
      ...report(name, status),
      quarantined: true,
    });
    const reports = [
      quarantined("a", "failed"),
      quarantined("b", "errored"),
      quarantined("c", "failed"),
      quarantined("c", "passed"),
      report("d", "failed"),
    ];
    expect(attemptSummary(reports, 1)).toEqual({
      tests: 4,
      passed: 1,
      failed: 3,
      skipped: 0,
      flaky: 1,
      quarantined_failures: 2,
    });
  });
});
