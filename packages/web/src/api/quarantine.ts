import type { QueryClient } from "@tanstack/react-query";
import type { operations } from "../../../client/src/sdk/api.generated.ts";
import { api } from "./client.ts";
import { ApiProblem, unwrap } from "./problem.ts";
import type { Problem } from "./types.ts";

// Quarantine of known-flaky tests (API.md §6): a quarantined test still runs and is reported, but its failure does
// not fail the run while someone fixes it.

export type Quarantine = operations["quarantineTest"]["responses"][200]["content"]["application/json"];

/** The most a reason may hold (the API refuses longer ones). */
export const maxReasonLength = 500;

export async function quarantineTest(testId: string, reason: string): Promise<Quarantine> {
  return unwrap(
    await api.PUT("/v1/tests/{test_id}/quarantine", {
      params: { path: { test_id: testId } },
      body: { reason },
    }),
  );
}

/** Releases a test: 204, also when it was not quarantined (nothing to undo). */
export async function releaseTest(testId: string): Promise<void> {
  const result = await api.DELETE("/v1/tests/{test_id}/quarantine", {
    params: { path: { test_id: testId } },
  });
  if (result.response.ok) return;
  const problem = typeof result.error === "object" && result.error !== null ? result.error : {};
  throw new ApiProblem(result.response.status, problem as Partial<Problem>);
}

/**
 * What a quarantine changes on screen: every run's tests (their `quarantined`) and the plan's history (the
 * quarantine's who and why). Read again, not patched: the server decides what it shows.
 */
export async function quarantineChanged(queries: QueryClient, planId: string): Promise<void> {
  await Promise.all([
    queries.invalidateQueries({ queryKey: ["test-history", planId] }),
    queries.invalidateQueries({
      predicate: (query) => query.queryKey[0] === "execution" && query.queryKey[2] === "tests",
    }),
  ]);
}
