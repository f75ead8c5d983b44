// What a check run says: its conclusion from the execution's status and how following it ended, annotations in
// batches of 50 (the checks API's limit), and an annotation's level by the failure's kind.
import { describe, expect, it } from "vitest";
import type { Execution } from "../sdk/models.ts";
import { annotationOf, checkTitle, conclusionOf, inBatches } from "./check-run-content.ts";
import type { ReportedTest } from "./failure-kind.ts";

const execution = (status: Execution["status"]) =>
  ({ id: "ex_1", status, summary: { tests: 3, passed: 1, failed: 2, skipped: 0, flaky: 1 } }) as Execution;

describe("conclusionOf", () => {
  it.each([
    ["passed", "ended", "success"],
    ["failed", "ended", "failure"],
    ["errored", "ended", "failure"],
    ["cancelled", "ended", "cancelled"],
    ["running", "timed_out", "timed_out"],
    ["queued", "timed_out", "timed_out"],
    ["running", "interrupted", "neutral"],
    ["failed", "interrupted", "failure"],
  ] as const)("%s, following %s: %s", (status, end, conclusion) => {
    expect(conclusionOf(execution(status), end)).toBe(conclusion);
  });

  it("titles a run still going when --timeout passed as such", () => {
    expect(checkTitle(execution("running"), "timed_out")).toBe(
      "still running when --timeout passed: 2 failed, 1 passed (1 flaky) of 3 tests",
    );
  });
});

describe("annotations", () => {
  it("go in batches of 50", () => {
    expect(inBatches(Array.from({ length: 120 }, (_, i) => i)).map((b) => b.length)).toEqual([50, 50, 20]);
    expect(inBatches([])).toEqual([]);
  });

  it("are failures, warnings for flaky tests, notices for quarantined ones; without a source file, on the class's path", () => {
    const test = {
      classname: "com.example.A",
      name: "b",
      status: "failed",
      message: "m",
      stack_trace: null,
    } as ReportedTest;
    const at = { path: "app/A.kt", line: 9 };
    expect(
      annotationOf({ test, kind: { kind: "new", why: "x" }, location: at, owners: [] }, "com/example/A"),
    ).toMatchObject({
      annotation_level: "failure",
      path: "app/A.kt",
      start_line: 9,
    });
    expect(
      annotationOf({ test, kind: { kind: "flaky", why: "x" }, location: at, owners: [] }, "f")
        .annotation_level,
    ).toBe("warning");
    const quarantined = annotationOf(
      { test, kind: { kind: "quarantined" }, location: undefined, owners: ["@o"] },
      "com/example/A",
    );
    expect(quarantined).toMatchObject({ annotation_level: "notice", path: "com/example/A", start_line: 1 });
    expect(quarantined.message).toContain("Owners: @o");
    expect(quarantined).not.toHaveProperty("raw_details");
  });
});
