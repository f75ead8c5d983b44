import { type Kysely, sql } from "kysely";
import type { Database } from "../../db/schema.ts";
import { percentile } from "../tests/test-history.ts";

export interface TrendDay {
  /** The UTC day, YYYY-MM-DD. */
  date: string;
  executions: number;
  passed: number;
  /** passed ÷ executions, 0–1. */
  pass_rate: number;
  p50_ms: number | null;
  p95_ms: number | null;
  flaky_tests: number;
  new_failure_groups: number;
}

const finishedStatuses = ["passed", "failed", "errored", "cancelled"] as const;

/**
 * A plan's trends (API.md §16), one day at a time over its finished executions of the last `days` UTC days
 * (today included), by the day each was triggered; days without executions are left out.
 * - executions, passed, pass_rate: the finished executions and those that passed;
 * - p50_ms, p95_ms: their durations, from start (or trigger, when it never started) to finish;
 * - flaky_tests: tests that both failed and passed within one execution that day;
 * - new_failure_groups: failure groups first seen in this plan that day.
 */
export async function planTrends(
  db: Kysely<Database>,
  organizationId: string,
  testPlanId: string,
  days: number,
  now: Date,
): Promise<TrendDay[]> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const from = new Date(today - (days - 1) * 86_400_000).toISOString();
  const executions = await db
    .selectFrom("executions")
    .select(["id", "status", "created_at", "started_at", "finished_at"])
    .where("organization_id", "=", organizationId)
    .where("test_plan_id", "=", testPlanId)
    .where("created_at", ">=", from)
    .where("status", "in", finishedStatuses)
    .execute();
  if (executions.length === 0) return [];

  const flaky = await db
    .selectFrom("executions as e")
    .innerJoin("device_runs as dr", "dr.execution_id", "e.id")
    .innerJoin("test_cases as tc", "tc.device_run_id", "dr.id")
    .select(["e.created_at", "tc.test_id"])
    .where("e.organization_id", "=", organizationId)
    .where("e.test_plan_id", "=", testPlanId)
    .where("e.created_at", ">=", from)
    .where("e.status", "in", finishedStatuses)
    .where("tc.status", "in", ["passed", "failed", "errored"])
    .groupBy(["e.id", "e.created_at", "tc.test_id"])
    .having(sql<number>`sum(case when tc.status = 'passed' then 1 else 0 end)`, ">", 0)
    .having(sql<number>`sum(case when tc.status = 'passed' then 0 else 1 end)`, ">", 0)
    .execute();

  // A group's first occurrence in the plan, over all its history (its row, failure-groups.writer.ts): new on that
  // day, if the day is in the window.
  const firstSeen = await db
    .selectFrom("failure_groups")
    .select(["signature", "first_at"])
    .where("organization_id", "=", organizationId)
    .where("test_plan_id", "=", testPlanId)
    .where("first_at", ">=", from)
    .execute();

  const byDay = new Map<
    string,
    { passed: number; durations: number[]; flaky: Set<string>; groups: number; executions: number }
  >();
  const day = (at: string) => {
    const date = at.slice(0, 10);
    let entry = byDay.get(date);
    if (!entry) {
      entry = { passed: 0, durations: [], flaky: new Set(), groups: 0, executions: 0 };
      byDay.set(date, entry);
    }
    return entry;
  };
  for (const execution of executions) {
    const entry = day(execution.created_at);
    entry.executions += 1;
    if (execution.status === "passed") entry.passed += 1;
    if (execution.finished_at !== null) {
      const started = Date.parse(execution.started_at ?? execution.created_at);
      entry.durations.push(Math.max(0, Date.parse(execution.finished_at) - started));
    }
  }
  for (const row of flaky) if (row.test_id !== null) day(row.created_at).flaky.add(row.test_id);
  for (const row of firstSeen) day(row.first_at).groups += 1;

  return [...byDay.entries()]
    .filter(([, entry]) => entry.executions > 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([date, entry]) => {
      const durations = entry.durations.sort((a, b) => a - b);
      return {
        date,
        executions: entry.executions,
        passed: entry.passed,
        pass_rate: entry.passed / entry.executions,
        p50_ms: percentile(durations, 0.5),
        p95_ms: percentile(durations, 0.95),
        flaky_tests: entry.flaky.size,
        new_failure_groups: entry.groups,
      };
    });
}
