import { describe, expect, it } from "vitest";
import { newlyFlaky } from "./newly-flaky.ts";
import type { FinalTestCase, WindowExecution } from "./test-history.repo.ts";

const at = (hour: number) => `2026-11-24T${String(hour).padStart(2, "0")}:00:00.000Z`;
/** Executions ex_1 … ex_n, newest first as the repository reads them. */
const executions = (n: number): WindowExecution[] =>
  Array.from({ length: n }, (_, i) => ({ id: `ex_${n - i}`, createdAt: at(n - i) }));
const passed = (executionId: string, name: string): FinalTestCase => ({
  executionId,
  classname: "com.example.CartTest",
  name,
  status: "passed",
  durationMs: 1000,
  failedBefore: false,
});
const flaky = (executionId: string, name: string): FinalTestCase => ({
  ...passed(executionId, name),
  failedBefore: true,
});
const failed = (executionId: string, name: string): FinalTestCase => ({
  ...passed(executionId, name),
  status: "failed",
  failedBefore: true,
});

describe("newlyFlaky", () => {
  it("names a test flaky now and in none of the previous executions, with its history over the window", () => {
    const window = executions(3);
    const [current] = window as [WindowExecution];
    const tests = newlyFlaky("tp_1", current, window, [
      flaky("ex_3", "paysWithCard"),
      passed("ex_3", "addsToCart"),
      passed("ex_2", "paysWithCard"),
      failed("ex_1", "paysWithCard"),
    ]);
    expect(tests).toMatchObject([
      {
        name: "paysWithCard",
        runs: 3,
        failures: 1,
        flaky_runs: 1,
        flaky_rate: 0.333,
        last_execution_id: "ex_3",
      },
    ]);
  });

  it("names none when the test was flaky in an execution of the window before", () => {
    const window = executions(3);
    const [current] = window as [WindowExecution];
    expect(
      newlyFlaky("tp_1", current, window, [flaky("ex_3", "paysWithCard"), flaky("ex_1", "paysWithCard")]),
    ).toEqual([]);
  });

  it("forgets flakiness older than the window", () => {
    const window = executions(4);
    const [current] = window as [WindowExecution];
    const cases = [
      flaky("ex_4", "paysWithCard"),
      passed("ex_3", "paysWithCard"),
      flaky("ex_1", "paysWithCard"),
    ];
    // ex_1 is the third previous execution: inside a window of 3, outside one of 2.
    expect(newlyFlaky("tp_1", current, window, cases, 3)).toEqual([]);
    expect(newlyFlaky("tp_1", current, window, cases, 2)).toMatchObject([{ name: "paysWithCard", runs: 2 }]);
  });

  it("does not count a test that failed in the end on another device of the execution as flaky", () => {
    const window = executions(1);
    const [current] = window as [WindowExecution];
    expect(
      newlyFlaky("tp_1", current, window, [flaky("ex_1", "paysWithCard"), failed("ex_1", "paysWithCard")]),
    ).toEqual([]);
  });

  it("takes an execution that finished after the window's newest as the latest run", () => {
    const window = executions(3);
    const late = { id: "ex_0", createdAt: at(0) };
    const tests = newlyFlaky(
      "tp_1",
      late,
      window,
      [flaky("ex_0", "paysWithCard"), passed("ex_3", "paysWithCard")],
      2,
    );
    expect(tests).toMatchObject([{ name: "paysWithCard", runs: 2, flaky_runs: 1, flaky_rate: 0.5 }]);
  });
});
