/**
 * Appending test.flaky_detected for an execution that just finished with flaky tests (newly-flaky.ts
 * decides which). Called by features/device-runs inside the transaction that settled the execution, so the
 * events and the finish commit together: the final settle happens once per execution, so each test gets at
 * most one event per execution. Reads with the history's own repository (the window, this execution's
 * cases, the flaky tests' past: three statements), then one insert per event; only executions whose summary
 * has flaky > 0 come here.
 */
import { type Kysely, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";
import type { Database } from "../../db/schema.ts";
import { append } from "../events/index.ts";
import { flakyWindow, newlyFlaky } from "./newly-flaky.ts";
import { TestHistoryRepo } from "./test-history.repo.ts";
import { testHistories } from "./test-history.ts";

export interface FinishedExecution {
  organizationId: string;
  testPlanId: string;
  executionId: string;
  /** When it finished (ISO), the events' time. */
  at: string;
}

/** Appends one test.flaky_detected per newly flaky test of the execution; returns how many. */
export async function appendFlakyDetected(
  db: Kysely<Database>,
  dialect: Dialect,
  finished: FinishedExecution,
): Promise<number> {
  if (dialect === "postgres") {
    // Two executions of one plan finishing at the same moment would each miss the other's (uncommitted) flaky
    // test in the window and both announce it: the plan's row, locked until the finish commits, makes the
    // second wait and then read the first. NO KEY UPDATE: triggers inserting executions (a key share on the
    // plan) are not held up.
    await sql`select id from test_plans where id = ${finished.testPlanId} for no key update`.execute(db);
  }
  const repo = new TestHistoryRepo(db);
  // One more than the window: the execution itself is in it (finished in this transaction).
  const window = await repo.window(finished.organizationId, finished.testPlanId, flakyWindow + 1);
  const execution = window.find((e) => e.id === finished.executionId) ?? {
    id: finished.executionId,
    createdAt: finished.at,
  };
  // This execution's cases first; the window's only for the tests flaky in it, so a plan of thousands of
  // tests reads a few tests' past, not 20 executions of everything, inside the finishing transaction.
  const current = await repo.finalCases([execution.id]);
  const flaky = testHistories(finished.testPlanId, [execution], current).filter(
    (test) => test.flaky_runs > 0,
  );
  if (flaky.length === 0) return 0;
  const previous = window.filter((e) => e.id !== execution.id).map((e) => e.id);
  const past = await repo.finalCases(
    previous,
    flaky.map((test) => test.id),
  );
  const tests = newlyFlaky(finished.testPlanId, execution, window, [...current, ...past]);
  for (const test of tests) {
    await append(db, {
      organizationId: finished.organizationId,
      type: "test.flaky_detected",
      subjectId: test.id,
      at: finished.at,
      // API.md §9's {test, test_plan_id, flaky_rate}, and the fields a receiver filters on without digging.
      data: {
        test,
        test_plan_id: finished.testPlanId,
        flaky_rate: test.flaky_rate,
        test_id: test.id,
        classname: test.classname,
        name: test.name,
        execution_id: finished.executionId,
        flaky_runs: test.flaky_runs,
        runs: test.runs,
      },
    });
  }
  return tests.length;
}
