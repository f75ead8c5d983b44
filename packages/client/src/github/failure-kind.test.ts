// A failure's kind as the check run's annotation says it: quarantined, then flaky (a retry passed, or flaky in
// its history), then new or known, from its failure group when the server groups failures (API.md §16), else
// from the test's history in its plan.
import { describe, expect, it } from "vitest";
import type { ExecutionGroups, FailureGroup, TestHistory } from "./failure-groups.ts";
import { failureKind, type ReportedTest } from "./failure-kind.ts";

const test = (changes: Partial<ReportedTest> = {}): ReportedTest => ({
  id: "t_1",
  classname: "com.example.LoginTest",
  name: "logsIn",
  status: "failed",
  flaky: false,
  quarantined: false,
  duration_ms: 10,
  message: "boom",
  stack_trace: null,
  device: { position: 0, platform: "android", serial: null, model: null, os_version: null },
  shard: 0,
  attempt: 1,
  attempts: [{ attempt: 1, retry: 0, status: "failed", duration_ms: 10, message: "boom", artifacts: [] }],
  artifacts: [],
  video_offset_ms: null,
  ...changes,
});

const history = (changes: Partial<TestHistory> = {}): TestHistory => ({
  id: "t_1",
  runs: 5,
  failures: 1,
  flaky_runs: 0,
  last_execution_id: "ex_now",
  ...changes,
});

const failureGroup = (firstExecution: string): FailureGroup => ({
  signature: "sig1",
  first_seen: {
    execution_id: firstExecution,
    version: "1.2.2",
    commit: "abcdef0123",
    at: "2026-11-20T10:00:00Z",
  },
});

/** The groups as the server gives them: by the test case's signature, or by test id from the occurrences. */
const group = (firstExecution: string, by: "signature" | "test" = "signature"): ExecutionGroups => ({
  bySignature: by === "signature" ? new Map([["sig1", failureGroup(firstExecution)]]) : new Map(),
  byTest: by === "test" ? new Map([["t_1", failureGroup(firstExecution)]]) : new Map(),
});

describe("failureKind", () => {
  it("says quarantined first, whatever else is true", () => {
    expect(failureKind(test({ quarantined: true, flaky: true }), "ex_now", undefined, history())).toEqual({
      kind: "quarantined",
    });
  });

  it("says flaky when a retry passed, or when its history has flaky runs", () => {
    const retried = test({
      status: "passed",
      attempts: [
        { attempt: 1, retry: 0, status: "failed", duration_ms: 1, message: "x", artifacts: [] },
        { attempt: 1, retry: 1, status: "passed", duration_ms: 1, message: null, artifacts: [] },
      ],
    });
    expect(failureKind(retried, "ex_now", undefined, undefined)).toEqual({
      kind: "flaky",
      why: "passed on a retry (2 tries)",
    });
    expect(failureKind(test(), "ex_now", undefined, history({ flaky_runs: 2, runs: 10 })).kind).toBe("flaky");
  });

  it("says new or known from the failure group, with where it was first seen", () => {
    expect(failureKind(test({ signature: "sig1" }), "ex_now", group("ex_now"), history()).kind).toBe("new");
    expect(failureKind(test({ signature: "sig1" }), "ex_now", group("ex_old"), history())).toEqual({
      kind: "known",
      why: "its failure group was first seen in ex_old (version 1.2.2, commit abcdef0, 2026-11-20)",
      firstSeen: failureGroup("ex_old").first_seen,
    });
    expect(failureKind(test(), "ex_now", group("ex_old", "test"), history()).kind).toBe("known");
    expect(failureKind(test(), "ex_now", group("ex_now", "test"), history({ failures: 4 })).kind).toBe("new");
  });

  it("without groups, says known when the test failed in an earlier execution of the plan", () => {
    expect(failureKind(test(), "ex_now", undefined, history({ failures: 1 })).kind).toBe("new");
    expect(failureKind(test(), "ex_now", undefined, history({ failures: 3, runs: 4 }))).toEqual({
      kind: "known",
      why: "it failed in 2 earlier of the plan's last 4 executions",
    });
    // The history not yet holding this execution: each failure in it is an earlier one.
    expect(
      failureKind(test(), "ex_now", undefined, history({ failures: 1, last_execution_id: "ex_old" })).kind,
    ).toBe("known");
    expect(failureKind(test(), "ex_now", undefined, undefined).kind).toBe("new");
  });
});
