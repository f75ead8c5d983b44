import { describe, expect, it } from "vitest";
import type { TestHistory } from "../../api/test-history.ts";
import { historyNote } from "./test-history-note.ts";

const history = (fields: Partial<TestHistory>): TestHistory => ({
  id: "t_1",
  classname: "com.example.LoginTest",
  name: "signsIn",
  runs: 5,
  failures: 1,
  flaky_runs: 0,
  flaky_rate: 0,
  p50_ms: 1000,
  p80_ms: 1200,
  last_status: "failed",
  last_execution_id: "ex_this",
  last_run_at: "2026-11-24T08:00:00.000Z",
  first_seen_at: "2026-11-20T08:00:00.000Z",
  new: false,
  quarantined: false,
  quarantine: null,
  ...fields,
});
const finished = { id: "ex_this", finished: true };
const live = { id: "ex_this", finished: false };

describe("historyNote", () => {
  it("calls a test new when this run is the first it ran in", () => {
    expect(historyNote(history({ runs: 1, new: true }), finished)?.text).toBe("New: first run of this test");
    expect(historyNote(undefined, live)?.text).toBe("New: first run of this test");
  });

  it("calls a test that passed every run before this one a regression, with how many", () => {
    expect(historyNote(history({ runs: 5, failures: 1 }), finished)).toEqual({
      kind: "regression",
      text: "Passed the last 4 runs before this one",
    });
    expect(historyNote(history({ runs: 2, failures: 1 }), finished)?.text).toBe(
      "Passed the last run before this one",
    );
    // While the run goes on, the history is the runs before it.
    expect(
      historyNote(
        history({ runs: 3, failures: 0, last_status: "passed", last_execution_id: "ex_before" }),
        live,
      )?.text,
    ).toBe("Passed the last 3 runs before this one");
  });

  it("says how often a flaky test passed after failing", () => {
    expect(historyNote(history({ runs: 6, failures: 2, flaky_runs: 3 }), finished)).toEqual({
      kind: "flaky",
      text: "Flaky: passed after failing in 3 of 6 runs",
    });
  });

  it("counts the failures of a test failing again", () => {
    expect(historyNote(history({ runs: 4, failures: 3 }), finished)).toEqual({
      kind: "failing",
      text: "Failed 3 of the last 4 runs",
    });
  });

  it("does not claim what came before a run that is not the test's newest", () => {
    const older = { id: "ex_older", finished: true };
    expect(historyNote(history({ runs: 5, failures: 1 }), older)?.text).toBe("Failed 1 of the last 5 runs");
    expect(historyNote(undefined, older)).toBeNull();
  });
});
