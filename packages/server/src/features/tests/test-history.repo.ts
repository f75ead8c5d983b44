import type { Kysely } from "kysely";
import type { Database, TestCaseStatus } from "../../db/schema.ts";

/** One finished execution of the window, newest first. */
export interface WindowExecution {
  id: string;
  createdAt: string;
}

/**
 * A test's final result on one device run of an execution: what GET /executions/{id}/tests shows for it
 * (the last case of the run's latest attempt), plus whether any attempt of that run had it failing.
 */
export interface FinalTestCase {
  executionId: string;
  classname: string;
  name: string;
  status: TestCaseStatus;
  durationMs: number | null;
  failedBefore: boolean;
}

const finishedStatuses = ["passed", "failed", "errored", "cancelled"] as const;

/** What the history of a plan's tests is made of, read in two statements whatever the number of tests. */
export class TestHistoryRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The plan's last `size` finished executions, newest first (an index range scan on executions_org_plan_idx). */
  async window(organizationId: string, testPlanId: string, size: number): Promise<WindowExecution[]> {
    const rows = await this.db
      .selectFrom("executions")
      .select(["id", "created_at"])
      .where("organization_id", "=", organizationId)
      .where("test_plan_id", "=", testPlanId)
      .where("status", "in", finishedStatuses)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(size)
      .execute();
    return rows.map((row) => ({ id: row.id, createdAt: row.created_at }));
  }

  /**
   * The final test cases of the executions, one per test and device run: the last case of the run's latest
   * attempt, as GET /executions/{id}/tests picks it, and whether any attempt of the run had it failing.
   *
   * Read as plain rows (only the columns the history needs, no messages or stack traces) and reduced in one
   * pass here: measured on 5,000 tests × 20 executions, picking the final case with window functions in SQL
   * cost twice the time of reading the rows, because the database sorts every partition first.
   */
  async finalCases(
    executionIds: readonly string[],
    /** Only these tests (testId()s): test.flaky_detected looks up a few tests' past, not the whole plan's. */
    testIds?: readonly string[],
  ): Promise<FinalTestCase[]> {
    if (executionIds.length === 0 || testIds?.length === 0) return [];
    let query = this.db
      .selectFrom("device_runs")
      .innerJoin("test_cases", "test_cases.device_run_id", "device_runs.id")
      .select([
        "device_runs.execution_id",
        "device_runs.attempt as run_attempt",
        "test_cases.device_run_id",
        "test_cases.attempt",
        "test_cases.seq",
        "test_cases.classname",
        "test_cases.name",
        "test_cases.status",
        "test_cases.duration_ms",
      ])
      .where("device_runs.execution_id", "in", executionIds);
    if (testIds) query = query.where("test_cases.test_id", "in", testIds);
    const rows = await query.execute();
    const finals = new Map<string, FinalTestCase & { attempt: number; seq: number; runAttempt: number }>();
    for (const row of rows) {
      const key = `${row.device_run_id}\u0000${row.classname}\u0000${row.name}`;
      const [attempt, seq] = [Number(row.attempt), Number(row.seq)];
      const fails = row.status === "failed" || row.status === "errored";
      const seen = finals.get(key);
      if (seen && (seen.attempt > attempt || (seen.attempt === attempt && seen.seq > seq))) {
        seen.failedBefore ||= fails;
        continue;
      }
      finals.set(key, {
        executionId: row.execution_id,
        classname: row.classname,
        name: row.name,
        status: row.status,
        durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
        failedBefore: fails || (seen?.failedBefore ?? false),
        attempt,
        seq,
        runAttempt: Number(row.run_attempt),
      });
    }
    // A test of an earlier attempt only (the run was re-queued and it did not come back) is not a result.
    return [...finals.values()].filter((c) => c.attempt === c.runAttempt);
  }
}
