import { describe, expect, it } from "vitest";
import { executionEventSequence } from "./execution-sequence.ts";

describe("executionEventSequence", () => {
  it("numbers an execution's events in the order they happen", () => {
    expect(executionEventSequence("execution.started")).toBe(1);
    expect(executionEventSequence("execution.finished")).toBe(2);
  });

  it("leaves other events without one", () => {
    for (const type of ["version.uploaded", "test.flaky_detected", "webhook.test"]) {
      expect(executionEventSequence(type)).toBeUndefined();
    }
  });
});
