/**
 * execution.started and execution.finished in the event outbox (API.md §9; webhooks deliver them). Each is
 * appended by the statement (or in the transaction) that starts or finishes the execution, so it exists exactly
 * when that change does, once per execution: the claim that takes its first run starts it, and a settle that
 * makes it final finishes it (a final execution is never settled again). The event carries the execution's id
 * and status; the sender reads the execution object it delivers when it makes the delivery.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";
import type { Database } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import { append } from "../events/index.ts";
import { settleExecution } from "./settle-query.ts";

export type ExecutionEventType = "execution.started" | "execution.finished";

const finals = sql.join(["passed", "failed", "errored", "cancelled"].map((status) => sql.lit(status)));

/**
 * An INSERT of the event for every row of `source` (a CTE or subquery with the execution's `id`,
 * `organization_id` and `status`), for a statement that both changes the execution and announces it. `finished`
 * keeps only the rows whose status is final.
 */
export function insertExecutionEvent(
  dialect: Dialect,
  type: ExecutionEventType,
  source: RawBuilder<unknown>,
  at: string,
): RawBuilder<unknown> {
  const payload =
    dialect === "postgres"
      ? sql`cast(json_build_object('execution_id', s.id, 'status', s.status) as text)`
      : sql`json_object('execution_id', s.id, 'status', s.status)`;
  const only = type === "execution.finished" ? sql`where s.status in (${finals})` : sql``;
  return sql`insert into events (id, organization_id, type, subject_id, payload, created_at)
    select ${newId("evt", Date.parse(at))}, s.organization_id, ${type}, s.id, ${payload}, ${at}
    from ${source} s ${only}`;
}

/** Appends the event for an execution the caller just started or finished, in the caller's transaction. */
export function appendExecutionEvent(
  db: Kysely<Database>,
  type: ExecutionEventType,
  execution: { id: string; organizationId: string; status: string },
  at: string,
): Promise<string> {
  return append(db, {
    organizationId: execution.organizationId,
    type,
    subjectId: execution.id,
    data: { execution_id: execution.id, status: execution.status },
    at,
  });
}

/**
 * settleExecution, run on its own, with execution.finished appended when it made the execution final: for the
 * callers that settle inside a transaction of theirs (SQLite's end of an attempt, a cancel, a release).
 */
export async function settleAndAnnounce(
  db: Kysely<Database>,
  dialect: Dialect,
  executionId: string,
  at: string,
): Promise<{ status: string; summary: string | null } | undefined> {
  const settled = (await settleExecution(dialect, executionId, at).execute(db)).rows[0];
  if (settled && ["passed", "failed", "errored", "cancelled"].includes(settled.status)) {
    await appendExecutionEvent(
      db,
      "execution.finished",
      { id: settled.id, organizationId: settled.organization_id, status: settled.status },
      at,
    );
  }
  return settled;
}
