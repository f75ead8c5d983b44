/**
 * How long each test of a plan is expected to take, for `duration` sharding: the p80 of its durations over
 * the plan's recent finished executions, the same p80 GET /v1/tests reports (the test history's own code,
 * features/tests, read and computed once per planned step).
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { TestHistoryRepo } from "../tests/test-history.repo.ts";
import { testHistories } from "../tests/test-history.ts";
import { testKey } from "./shard-plan.ts";

/** Executions of the plan whose durations count: enough for a stable p80, recent enough to follow changes. */
export const durationWindow = 20;

/** Expected ms by testKey; a test never run in the window is absent (shard-plan.ts expects 15 s of it). */
export async function expectedDurations(
  db: Kysely<Database>,
  organizationId: string,
  testPlanId: string,
): Promise<Map<string, number>> {
  const repo = new TestHistoryRepo(db);
  const window = await repo.window(organizationId, testPlanId, durationWindow);
  if (window.length === 0) return new Map();
  const cases = await repo.finalCases(window.map((execution) => execution.id));
  const expected = new Map<string, number>();
  for (const history of testHistories(testPlanId, window, cases)) {
    if (history.p80_ms !== null) expected.set(testKey(history), history.p80_ms);
  }
  return expected;
}
