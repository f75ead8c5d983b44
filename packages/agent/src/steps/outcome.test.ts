import { describe, expect, it } from "vitest";
import { abortMessage, formatSeconds, testCasesOutcome, worstOutcome } from "./outcome.ts";
import type { TestCase } from "./step-types.ts";

const testCase = (status: TestCase["status"]): TestCase => ({
  classname: "C",
  name: status,
  status,
  duration_ms: null,
  message: null,
  details: null,
});

describe("outcome rules", () => {
  it("keeps the most severe outcome, the first of equals", () => {
    const failed = { status: "failed" as const, message: "exit code 1" };
    const errored = { status: "errored" as const, message: "bad report" };
    expect(worstOutcome()).toEqual({ status: "passed", message: null });
    expect(worstOutcome(failed, errored, { status: "failed", message: "other" })).toBe(errored);
    expect(worstOutcome(failed, { status: "failed", message: "later" })).toBe(failed);
    expect(worstOutcome(errored, { status: "cancelled", message: "cancelled" }).status).toBe("cancelled");
  });

  it("fails on failed or errored test cases, not on skipped ones", () => {
    expect(testCasesOutcome([testCase("passed"), testCase("skipped")]).status).toBe("passed");
    expect(testCasesOutcome([testCase("passed"), testCase("errored"), testCase("failed")])).toEqual({
      status: "failed",
      message: "2 of 3 test cases failed",
    });
  });

  it("writes seconds plainly", () => {
    expect(formatSeconds(600_000)).toBe("600 s");
    expect(formatSeconds(250)).toBe("0.25 s");
  });

  it("names the abort reason when the runner gave one", () => {
    const controller = new AbortController();
    controller.abort();
    expect(abortMessage(controller.signal)).toBe("cancelled");
    const planTimeout = new AbortController();
    planTimeout.abort(new Error("the plan's timeout of 1800 s ran out"));
    expect(abortMessage(planTimeout.signal)).toBe("the plan's timeout of 1800 s ran out");
  });
});
