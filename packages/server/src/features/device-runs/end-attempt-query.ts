/**
 * Ending an attempt as decided (attempt-outcome.ts): the attempt's row, the run (re-queued for its next
 * attempt, or ended), and the execution settled from its runs. On PostgreSQL that is one statement. It
 * writes only while the execution is as the caller read it (`HeldRun.executionVersion`), or, inside a
 * transaction that locked it, unconditionally: a sibling run ending at the same moment changes the execution
 * row, so this statement then writes nothing and the caller reads again, instead of settling from runs as
 * they were before the sibling ended. On SQLite the caller's transaction (IMMEDIATE) keeps other writers out.
 * A sharded run's end also hands its lease's test batches back to the queue (batch-hand-over.ts).
 * An optimistic end that would finish the execution with flaky tests writes nothing (`lock`): the caller
 * ends it again in a transaction, where test.flaky_detected is appended with the finish (device-runs.ts).
 */
import { type Kysely, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";
import type { Database, ExecutionStatus } from "../../db/schema.ts";
import type { AttemptEnd } from "./attempt-outcome.ts";
import { handBackBatches } from "./batch-hand-over.ts";
import { insertExecutionEvent, settleAndAnnounce } from "./execution-events.ts";
import type { HeldRun } from "./held-run.ts";
import { settleExecution } from "./settle-query.ts";
import type { Summary } from "./test-summary.ts";

export type EndWritten =
  /**
   * Written; the execution's status after it (undefined: it had ended already and was left as it was), its
   * flaky tests as settled (0 when not settled), and how many of the lease's test batches went back to the
   * queue (batch-hand-over.ts).
   */
  | {
      written: true;
      executionStatus: ExecutionStatus | undefined;
      executionFlaky: number;
      batchesReturned: number;
    }
  /**
   * Nothing written: the lease is no longer held, or (`changed`) the execution changed since it was read,
   * or (`lock`) the end would finish the execution with flaky tests, which needs a transaction.
   */
  | { written: false; changed: boolean; lock?: boolean };

const finals = sql.join(["passed", "failed", "errored", "cancelled"].map((status) => sql.lit(status)));

/** The flaky count of a settled execution's summary (JSON text), 0 when it has none. */
export function flakyOf(summary: string | null | undefined): number {
  if (!summary) return 0;
  return Number((JSON.parse(summary) as { flaky?: number }).flaky ?? 0);
}

export async function writeEnd(
  db: Kysely<Database>,
  dialect: Dialect,
  held: HeldRun,
  end: AttemptEnd,
  reason: string | null,
  summary: Summary,
  at: string,
  /** PostgreSQL: check the execution's version read with `held` (false: the caller's transaction locked it). */
  optimistic: boolean,
): Promise<EndWritten> {
  const summaryText = JSON.stringify(summary);
  const run = end.requeued
    ? sql`status = 'queued', attempt = ${held.attempt + 1}, lease_id = null, lease_expires_at = null,
        claimed_device = null, reason = ${reason}, summary = ${summaryText}`
    : sql`status = ${end.status}, lease_id = null, lease_expires_at = null, reason = ${reason},
        summary = ${summaryText}, finished_at = ${at}`;
  const attempt = sql`status = ${end.status}, reason = ${reason}, summary = ${summaryText}, finished_at = ${at}`;
  if (dialect === "postgres") {
    const version = optimistic ? sql`and cast(xmin as text) = ${held.executionVersion ?? ""}` : sql``;
    // Whether this end finishes the execution with flaky tests: the run ends for good, every other run has
    // ended, and one of them or this attempt found a flaky test. Checked only on the optimistic path.
    const finishesFlaky =
      optimistic && !end.requeued
        ? sql`(not exists (select 1 from device_runs where execution_id = ${held.executionId} and id <> ${held.deviceRunId}
              and status not in (${finals}))
            and (${summary.flaky} > 0 or exists (select 1 from device_runs where execution_id = ${held.executionId}
              and id <> ${held.deviceRunId} and cast(cast(summary as json) ->> 'flaky' as integer) > 0)))`
        : sql`false`;
    const settle = settleExecution(
      dialect,
      held.executionId,
      at,
      sql`select status, summary from device_runs where execution_id = ${held.executionId} and id <> ${held.deviceRunId}
        union all select status, summary from ended`,
      sql`exists (select 1 from ended)`,
    );
    const result = await sql<{
      guarded: number | string;
      ended: number | string;
      status: ExecutionStatus | null;
      summary: string | null;
      finishes_flaky: boolean;
      batches_returned: number | string;
    }>`
      with guard as (select id from executions where id = ${held.executionId} ${version} and not ${finishesFlaky}
        for update),
      attempt_ended as (
        update device_run_attempts set ${attempt}
        where device_run_id = ${held.deviceRunId} and attempt = ${held.attempt} and exists (select 1 from guard)
      ),
      ended as (
        update device_runs set ${run}
        where id = ${held.deviceRunId} and lease_id = ${held.leaseId} and status = 'running'
          and exists (select 1 from guard)
        returning status, summary, shard_count
      ),
      batches_returned as (
        ${handBackBatches(dialect, held, end.requeued, sql`exists (select 1 from ended where shard_count > 1)`)}
      ),
      settled as (${settle}),
      finished_event as (${insertExecutionEvent(dialect, "execution.finished", sql`settled`, at)})
      select (select count(*) from guard) as guarded, (select count(*) from ended) as ended,
        (select status from settled) as status, (select summary from settled) as summary,
        ${finishesFlaky} as finishes_flaky,
        (select count(*) from batches_returned where state = 'queued') as batches_returned`.execute(db);
    const row = result.rows[0];
    if (row?.finishes_flaky) return { written: false, changed: true, lock: true };
    if (!row || Number(row.guarded) === 0) return { written: false, changed: true };
    if (Number(row.ended) === 0) return { written: false, changed: false };
    return {
      written: true,
      executionStatus: row.status ?? undefined,
      executionFlaky: flakyOf(row.summary),
      batchesReturned: Number(row.batches_returned),
    };
  }
  await sql`update device_run_attempts set ${attempt}
    where device_run_id = ${held.deviceRunId} and attempt = ${held.attempt}`.execute(db);
  const ended = await sql<{ shard_count: number }>`update device_runs set ${run}
    where id = ${held.deviceRunId} and lease_id = ${held.leaseId} and status = 'running'
    returning shard_count`.execute(db);
  const endedRun = ended.rows[0];
  if (!endedRun) return { written: false, changed: false };
  const returned =
    Number(endedRun.shard_count) > 1
      ? (await handBackBatches(dialect, held, end.requeued).execute(db)).rows
      : [];
  const settled = await settleAndAnnounce(db, dialect, held.executionId, at);
  return {
    written: true,
    executionStatus: (settled?.status as ExecutionStatus | undefined) ?? undefined,
    executionFlaky: flakyOf(settled?.summary),
    batchesReturned: returned.filter((batch) => batch.state === "queued").length,
  };
}
