import { infiniteQueryOptions, queryOptions } from "@tanstack/react-query";
import type { components } from "../../../client/src/sdk/api.generated.ts";
import { api } from "./client.ts";
import { ApiProblem, unwrap } from "./problem.ts";
import type { Execution, TestPlan } from "./types.ts";

// Test plans: listed by app and state, created and edited, archived, deleted (soft) and restored; and triggered on
// a version (API.md §5, §6).

export type TestPlanState = TestPlan["state"];
export type CreateTestPlan = components["schemas"]["CreateTestPlan"];
export type PatchTestPlan = components["schemas"]["PatchTestPlan"];
export type FailedExecution = components["schemas"]["FailedExecution"];

export const planStates: readonly TestPlanState[] = ["active", "archived", "deleted"];

/** How many plans a page of the list holds; "Show more" loads the next page (the API's cursor). */
export const planPageSize = 100;

export const planListQuery = (app: string | undefined, state: TestPlanState) =>
  infiniteQueryOptions({
    queryKey: ["plans", app ?? null, state],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      unwrap(
        await api.GET("/v1/testplans", {
          params: { query: { limit: planPageSize, cursor: pageParam, package_name: app, state } },
        }),
      ),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });

export const versionsQuery = (app: string) =>
  queryOptions({
    queryKey: ["versions", app],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/apps/{package_name}/versions", {
          params: { path: { package_name: app }, query: { limit: 100 } },
        }),
      ).items,
  });

export async function createPlan(body: CreateTestPlan): Promise<TestPlan> {
  return unwrap(await api.POST("/v1/testplans", { body }));
}

export async function updatePlan(id: string, body: PatchTestPlan): Promise<TestPlan> {
  return unwrap(await api.PATCH("/v1/testplans/{id}", { params: { path: { id } }, body }));
}

/** Moves a plan to another state: archive, delete (soft, restorable for 30 days) or restore. */
export async function changePlanState(id: string, to: "archive" | "delete" | "restore"): Promise<TestPlan> {
  const params = { params: { path: { id } } };
  if (to === "delete") return unwrap(await api.DELETE("/v1/testplans/{id}", params));
  if (to === "archive") return unwrap(await api.POST("/v1/testplans/{id}/archive", params));
  return unwrap(await api.POST("/v1/testplans/{id}/restore", params));
}

export interface TriggerOutcome {
  executions: Execution[];
  failed: FailedExecution[];
}

/**
 * POST /v1/testplan/run/batch for one plan. The caller keeps `idempotencyKey` while it retries the same trigger
 * (a repeat replays the first answer and starts nothing twice), and takes a new one for a new trigger. A plan the
 * server would not start comes back in `failed` with its detail and fix; a whole-request refusal is thrown.
 */
export async function triggerPlan(
  planId: string,
  app: string,
  version: string,
  idempotencyKey: string,
): Promise<TriggerOutcome> {
  const result = await api.POST("/v1/testplan/run/batch", {
    params: { header: { "idempotency-key": idempotencyKey } },
    body: { package_name: app, version, test_plan_ids: [planId] },
  });
  if (result.data) return { executions: result.data.executions, failed: result.data.failed_executions };
  const problem = (result.error ?? {}) as Record<string, unknown>;
  const failed = problem.failed_executions;
  if (Array.isArray(failed) && failed.length > 0)
    return { executions: [], failed: failed as FailedExecution[] };
  throw new ApiProblem(result.response.status, problem);
}

/** POST /v1/executions/{id}/cancel: a queued run ends at once, a running one is asked to stop. */
export async function cancelRun(id: string): Promise<Execution> {
  return unwrap(await api.POST("/v1/executions/{id}/cancel", { params: { path: { id } } }));
}
