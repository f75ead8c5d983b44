import { describe, expect, it } from "vitest";
import {
  attemptStatus,
  type EndingAttempt,
  lapsedEnd,
  maxAttemptsWithHandBacks,
  reportedEnd,
  sessionEnd,
} from "./attempt-outcome.ts";
import { attemptSummary } from "./test-summary.ts";

const noTests = attemptSummary([], 1);
const oneFailed = attemptSummary([{ classname: "C", name: "t", attempt: 1, status: "failed" }], 1);
const ending = (over: Partial<EndingAttempt> = {}): EndingAttempt => ({
  attempt: 1,
  maxAttempts: 1,
  cancelRequested: false,
  summary: noTests,
  ...over,
});

describe("attempt outcome", () => {
  it("turns a passed report with failed tests into failed", () => {
    expect(attemptStatus("passed", oneFailed)).toBe("failed");
    expect(attemptStatus("passed", noTests)).toBe("passed");
    expect(attemptStatus("errored", noTests)).toBe("errored");
  });

  it("passes an attempt whose only failures are quarantined tests, without another attempt", () => {
    const quarantinedFailure = attemptSummary(
      [{ classname: "C", name: "q", attempt: 1, status: "failed", quarantined: true }],
      1,
    );
    const both = attemptSummary(
      [
        { classname: "C", name: "q", attempt: 1, status: "failed", quarantined: true },
        { classname: "C", name: "t", attempt: 1, status: "failed" },
      ],
      1,
    );
    expect(attemptStatus("failed", quarantinedFailure)).toBe("passed");
    expect(attemptStatus("passed", quarantinedFailure)).toBe("passed");
    expect(reportedEnd(ending({ maxAttempts: 2, summary: quarantinedFailure }), "failed", null)).toEqual({
      status: "passed",
      requeued: false,
    });
    // Another test's failure still fails it; so does a failure no test explains (a step), and an error.
    expect(attemptStatus("passed", both)).toBe("failed");
    expect(attemptStatus("failed", both)).toBe("failed");
    expect(attemptStatus("failed", noTests)).toBe("failed");
    expect(attemptStatus("errored", quarantinedFailure)).toBe("errored");
  });

  it("ends a passed attempt, and a failed one when the plan allows no more attempts", () => {
    expect(reportedEnd(ending(), "passed", null)).toEqual({ status: "passed", requeued: false });
    expect(reportedEnd(ending(), "failed", null)).toEqual({ status: "failed", requeued: false });
    expect(reportedEnd(ending({ summary: oneFailed }), "passed", null)).toEqual({
      status: "failed",
      requeued: false,
    });
  });

  it("re-queues a failed or errored attempt while the plan allows more", () => {
    expect(reportedEnd(ending({ maxAttempts: 2 }), "failed", null)).toEqual({
      status: "failed",
      requeued: true,
    });
    expect(reportedEnd(ending({ maxAttempts: 2 }), "errored", "timeout")).toEqual({
      status: "errored",
      requeued: true,
    });
    expect(reportedEnd(ending({ attempt: 2, maxAttempts: 2 }), "errored", null).requeued).toBe(false);
    expect(reportedEnd(ending({ maxAttempts: 3, summary: oneFailed }), "passed", null)).toEqual({
      status: "failed",
      requeued: true,
    });
  });

  it("re-queues hand-backs past max_attempts, up to the hand-back limit", () => {
    for (const reason of ["agent_shutdown", "device_lost"]) {
      expect(reportedEnd(ending({ attempt: 5 }), "errored", reason)).toEqual({
        status: "errored",
        requeued: true,
      });
      expect(reportedEnd(ending({ attempt: maxAttemptsWithHandBacks - 1 }), "errored", reason).requeued).toBe(
        true,
      );
      expect(reportedEnd(ending({ attempt: maxAttemptsWithHandBacks }), "errored", reason).requeued).toBe(
        false,
      );
    }
    // Only an errored hand-back: a failed attempt with that reason is a finding.
    expect(reportedEnd(ending({ attempt: 2, maxAttempts: 2 }), "failed", "device_lost").requeued).toBe(false);
  });

  it("lets cancel win over everything", () => {
    const cancelled = { status: "cancelled", requeued: false };
    expect(reportedEnd(ending({ cancelRequested: true }), "passed", null)).toEqual(cancelled);
    expect(reportedEnd(ending({ cancelRequested: true, maxAttempts: 3 }), "failed", null)).toEqual(cancelled);
    expect(reportedEnd(ending({ cancelRequested: true }), "errored", "agent_shutdown")).toEqual(cancelled);
    expect(lapsedEnd(ending({ cancelRequested: true, maxAttempts: 3 }))).toEqual(cancelled);
  });

  it("errors a lapsed lease (agent_lost), re-queued only while the plan allows", () => {
    expect(lapsedEnd(ending({ maxAttempts: 2 }))).toEqual({ status: "errored", requeued: true });
    expect(lapsedEnd(ending({ attempt: 2, maxAttempts: 2 }))).toEqual({ status: "errored", requeued: false });
  });

  it("ends a WebDriver session's run once, as its client said unless it was cancelled", () => {
    const deleted = reportedEnd(ending(), "passed", "deleted");
    expect(sessionEnd(deleted, null)).toEqual({ status: "passed", requeued: false });
    expect(sessionEnd(deleted, "failed")).toEqual({ status: "failed", requeued: false });
    const idle = reportedEnd(ending(), "errored", "idle_timeout");
    expect(sessionEnd(idle, null)).toEqual({ status: "errored", requeued: false });
    expect(sessionEnd(idle, "passed")).toEqual({ status: "passed", requeued: false });
    // A lost device is handed back for another attempt in a plan's run; a session cannot be resumed.
    const lost = reportedEnd(ending(), "errored", "device_lost");
    expect(lost.requeued).toBe(true);
    expect(sessionEnd(lost, null)).toEqual({ status: "errored", requeued: false });
    const cancelled = reportedEnd(ending({ cancelRequested: true }), "passed", "deleted");
    expect(sessionEnd(cancelled, "passed")).toEqual({ status: "cancelled", requeued: false });
  });
});
