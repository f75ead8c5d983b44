import { describe, expect, it } from "vitest";
import { ExitCode } from "../cli/exit-codes.ts";
import type { Execution } from "../sdk/models.ts";
import { exitCodeIgnoringFailedTests } from "./ignore-failed-tests.ts";

const runs = (...statuses: Execution["status"][]) => statuses.map((status) => ({ status }) as Execution);

describe("ignore-failed-tests", () => {
  it("turns failed tests into exit 0", () => {
    expect(exitCodeIgnoringFailedTests(ExitCode.testsFailed, runs("passed", "failed"), true)).toBe(
      ExitCode.ok,
    );
  });

  it("keeps exit 1 for a run that errored or was cancelled", () => {
    expect(exitCodeIgnoringFailedTests(ExitCode.testsFailed, runs("failed", "errored"), true)).toBe(
      ExitCode.testsFailed,
    );
    expect(exitCodeIgnoringFailedTests(ExitCode.testsFailed, runs("cancelled"), true)).toBe(
      ExitCode.testsFailed,
    );
  });

  it("keeps every other code, and changes nothing without the key", () => {
    expect(exitCodeIgnoringFailedTests(ExitCode.gaveUp, runs("running"), true)).toBe(ExitCode.gaveUp);
    expect(exitCodeIgnoringFailedTests(ExitCode.testsFailed, runs("failed"), false)).toBe(
      ExitCode.testsFailed,
    );
  });
});
