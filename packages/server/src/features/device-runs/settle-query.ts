/**
 * Settling an execution: its status, summary and times brought in line with its device runs in one UPDATE
 * over an aggregate of the runs, so what it is set to comes from the runs as the statement sees them, never
 * from an earlier read. The rules are execution-outcome.ts's, written in SQL from the same constants.
 * A final execution is never changed again.
 */
import { type RawBuilder, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";
import { endingPrecedence, summaryKeys } from "./execution-outcome.ts";

const finals = sql.join(["passed", "failed", "errored", "cancelled"].map((status) => sql.lit(status)));

/** A count of a summary field of one run's `summary` JSON text (null when it has none yet). */
function summaryField(dialect: Dialect, key: string): RawBuilder<unknown> {
  return dialect === "postgres"
    ? sql`cast(cast(r.summary as json) ->> ${sql.lit(key)} as integer)`
    : sql`json_extract(r.summary, ${sql.lit(`$.${key}`)})`;
}

/**
 * The settling UPDATE of `executionId`, from `runs`: a query of (status, summary) rows, the execution's
 * device runs as they are after the change (by default read from device_runs). Returns the execution's id,
 * organization, and the status and summary (JSON text) set, or no row when the execution had already ended.
 */
export function settleExecution(
  dialect: Dialect,
  executionId: string,
  at: string,
  runs: RawBuilder<unknown> = sql`select status, summary from device_runs where execution_id = ${executionId}`,
  /** A further condition: settle only if it holds (end-attempt-query.ts: only if the run was ended). */
  only: RawBuilder<unknown> = sql`true`,
): RawBuilder<{ id: string; organization_id: string; status: string; summary: string | null }> {
  const counts = sql.join([
    sql`count(*) as runs`,
    sql`count(case when r.status = 'queued' then 1 end) as queued`,
    sql`count(case when r.status in (${finals}) then 1 end) as ended`,
    ...endingPrecedence.map(
      (status) =>
        sql`count(case when r.status = ${sql.lit(status)} then 1 end) as ${sql.ref(`runs_${status}`)}`,
    ),
    ...summaryKeys.map(
      (key) => sql`coalesce(sum(${summaryField(dialect, key)}), 0) as ${sql.ref(`sum_${key}`)}`,
    ),
  ]);
  // derivedStatus(), in the same order.
  const derived = sql`case when c.queued = c.runs then 'queued' when c.ended < c.runs then 'running' ${sql.join(
    endingPrecedence.map((status) => sql`when c.${sql.ref(`runs_${status}`)} > 0 then ${sql.lit(status)}`),
    sql` `,
  )} else 'passed' end`;
  const summaryPairs = sql.join(summaryKeys.map((key) => sql`${sql.lit(key)}, c.${sql.ref(`sum_${key}`)}`));
  const summary =
    dialect === "postgres"
      ? sql`cast(json_build_object(${summaryPairs}) as text)`
      : sql`json_object(${summaryPairs})`;
  return sql<{
    id: string;
    organization_id: string;
    status: string;
    summary: string | null;
  }>`update executions set
      status = case when t.derived = 'queued' and executions.started_at is not null then 'running' else t.derived end,
      summary = t.summary,
      started_at = coalesce(executions.started_at, case when t.derived = 'queued' then null else cast(${at} as text) end),
      finished_at = case when t.derived in (${finals}) then cast(${at} as text) else null end
    from (select ${derived} as derived, ${summary} as summary from (select ${counts} from (${runs}) r) c) t
    where executions.id = ${executionId} and executions.status in ('queued', 'running') and ${only}
    returning executions.id, executions.organization_id, executions.status, executions.summary`;
}
