import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import type { Summary } from "./executions.repo.ts";
import type { ResultsRepo } from "./results.repo.ts";
import { addSummaries, executionStatus, isFinal } from "./run-outcome.ts";

/**
 * Brings an execution's status, summary and times in line with its device runs. Called inside the
 * transaction that changed a run (claim, completion, lease expiry, cancel), so the two never disagree.
 * A final execution is never changed again.
 */
export async function settleExecution(
  db: Kysely<Database>,
  results: ResultsRepo,
  executionId: string,
  at: string,
): Promise<void> {
  const execution = await db
    .selectFrom("executions")
    .select(["status", "started_at"])
    .where("id", "=", executionId)
    .executeTakeFirst();
  if (!execution || isFinal(execution.status)) return;
  const runs = await db
    .selectFrom("device_runs")
    .select(["status", "summary"])
    .where("execution_id", "=", executionId)
    .execute();
  // Once started, an execution stays running while a run waits for another attempt.
  const derived = executionStatus(runs);
  const status = derived === "queued" && execution.started_at !== null ? "running" : derived;
  const final = isFinal(status);
  const flaky = await results.flakyCount(executionId, db);
  const summary = addSummaries(
    runs.map((run) => (run.summary === null ? null : (JSON.parse(run.summary) as Summary))),
    flaky,
  );
  await db
    .updateTable("executions")
    .set({
      status,
      summary: JSON.stringify(summary),
      started_at: execution.started_at ?? (status === "queued" ? null : at),
      finished_at: final ? at : null,
    })
    .where("id", "=", executionId)
    .where("status", "in", ["queued", "running"])
    .execute();
}
