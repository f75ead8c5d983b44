import type { Execution } from "../sdk/models.ts";

/**
 * Flank's matrix_ids.json, the index of a run's test matrices (its SavedMatrix: matrixId, state, webLink,
 * outcome…), written for Testbay's executions: one entry per execution, keyed by its ID, so scripts that read
 * the file find each run, its state, outcome and dashboard link.
 */
export function matrixIds(
  executions: Execution[],
  runNumbers: Map<string, number>,
  link: (id: string) => string,
) {
  return Object.fromEntries(
    executions.map((execution) => [
      execution.id,
      {
        matrixId: execution.id,
        state: stateOf(execution.status),
        webLink: link(execution.id),
        outcome: outcomeOf(execution.status),
        run: runNumbers.get(execution.id) ?? 1,
        testPlanId: execution.test_plan_id,
        packageName: execution.package_name,
        version: execution.version,
        summary: execution.summary ?? null,
      },
    ]),
  );
}

/** Flank's matrix states (FINISHED once a matrix ends), from an execution's status. */
function stateOf(status: Execution["status"]): string {
  if (status === "queued") return "PENDING";
  if (status === "running") return "RUNNING";
  return status === "cancelled" ? "CANCELLED" : "FINISHED";
}

/** Flank's outcomes: success, failure, inconclusive (infrastructure), skipped (cancelled); "" while running. */
function outcomeOf(status: Execution["status"]): string {
  const outcomes: Partial<Record<Execution["status"], string>> = {
    passed: "success",
    failed: "failure",
    errored: "inconclusive",
    cancelled: "skipped",
  };
  return outcomes[status] ?? "";
}
