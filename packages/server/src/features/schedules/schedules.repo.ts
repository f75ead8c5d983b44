import type { Kysely } from "kysely";
import type { Database, SchedulesTable } from "../../db/schema.ts";

/** What became of a schedule's last time (API.md §15 `last_result`). */
export interface LastResult {
  /** The time it was for. */
  scheduled_for: string;
  /** triggered: an execution was queued; skipped: nothing could run then, and `detail` says why. */
  outcome: "triggered" | "skipped";
  execution_id: string | null;
  version: string | null;
  detail: string;
  /** What to do so the next time runs; null when it ran. */
  fix: string | null;
}

export interface ScheduleRecord {
  id: string;
  organizationId: string;
  testPlanId: string;
  cron: string;
  timezone: string;
  version: string;
  enabled: boolean;
  nextRunAt: string | null;
  lastResult: LastResult | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** A schedule due to fire: enough to claim it and work out its next time. */
export interface DueSchedule {
  id: string;
  cron: string;
  timezone: string;
  nextRunAt: string;
}

const toRecord = (row: SchedulesTable): ScheduleRecord => ({
  id: row.id,
  organizationId: row.organization_id,
  testPlanId: row.test_plan_id,
  cron: row.cron,
  timezone: row.timezone,
  version: row.version,
  enabled: Boolean(row.enabled),
  nextRunAt: row.next_run_at,
  lastResult: row.last_result === null ? null : (JSON.parse(row.last_result) as LastResult),
  createdBy: row.created_by,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The schedules table's only reader and writer (migration 0031). */
export class SchedulesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(schedule: ScheduleRecord): Promise<void> {
    await this.db
      .insertInto("schedules")
      .values({
        id: schedule.id,
        organization_id: schedule.organizationId,
        test_plan_id: schedule.testPlanId,
        cron: schedule.cron,
        timezone: schedule.timezone,
        version: schedule.version,
        enabled: schedule.enabled ? 1 : 0,
        next_run_at: schedule.nextRunAt,
        last_result: null,
        created_by: schedule.createdBy,
        created_at: schedule.createdAt,
        updated_at: schedule.updatedAt,
      })
      .execute();
  }

  /** The plan's schedules, oldest first. */
  async listForPlan(organizationId: string, testPlanId: string): Promise<ScheduleRecord[]> {
    const rows = await this.db
      .selectFrom("schedules")
      .selectAll()
      .where("test_plan_id", "=", testPlanId)
      .where("organization_id", "=", organizationId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(toRecord);
  }

  async countForPlan(testPlanId: string): Promise<number> {
    const row = await this.db
      .selectFrom("schedules")
      .select((eb) => eb.fn.countAll<number | string>().as("count"))
      .where("test_plan_id", "=", testPlanId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** The schedule if it is the organization's; another organization's is not found. */
  async find(organizationId: string, id: string): Promise<ScheduleRecord | undefined> {
    const row = await this.db
      .selectFrom("schedules")
      .selectAll()
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Changes what a PATCH changed; undefined when the schedule is gone (deleted meanwhile). */
  async update(
    organizationId: string,
    id: string,
    change: Pick<ScheduleRecord, "cron" | "timezone" | "version" | "enabled" | "updatedAt"> & {
      /** Left as it is when absent: a PATCH of the version alone does not move the next time. */
      nextRunAt?: string | null;
    },
  ): Promise<ScheduleRecord | undefined> {
    const row = await this.db
      .updateTable("schedules")
      .set({
        cron: change.cron,
        timezone: change.timezone,
        version: change.version,
        enabled: change.enabled ? 1 : 0,
        updated_at: change.updatedAt,
        ...(change.nextRunAt === undefined ? {} : { next_run_at: change.nextRunAt }),
      })
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("schedules")
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Enabled schedules whose next time is at or before `now`, the most overdue first (schedules_due_idx). */
  async due(now: string, limit: number): Promise<DueSchedule[]> {
    const rows = await this.db
      .selectFrom("schedules")
      .select(["id", "cron", "timezone", "next_run_at"])
      .where("next_run_at", "<=", now)
      .where("enabled", "=", 1)
      .orderBy("next_run_at")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      cron: row.cron,
      timezone: row.timezone,
      nextRunAt: row.next_run_at as string,
    }));
  }

  /**
   * Takes the time `due` of the schedule for this instance by moving its next time on to `next`, in one
   * statement that changes the row only while next_run_at still is `due`: of instances that read the same due
   * row, exactly one changes it and gets the row back; the others change nothing and get undefined. A PATCH
   * or DELETE that came first wins the same way. PostgreSQL's row lock makes the second UPDATE re-read the row
   * after the first commits (READ COMMITTED re-checks the WHERE), and SQLite runs one writer at a time.
   */
  async claim(id: string, due: string, next: string | null): Promise<ScheduleRecord | undefined> {
    const row = await this.db
      .updateTable("schedules")
      .set({ next_run_at: next })
      .where("id", "=", id)
      .where("next_run_at", "=", due)
      .where("enabled", "=", 1)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Records what became of a time; a schedule deleted meanwhile is left deleted. */
  async recordResult(id: string, result: LastResult): Promise<void> {
    await this.db
      .updateTable("schedules")
      .set({ last_result: JSON.stringify(result) })
      .where("id", "=", id)
      .execute();
  }
}
