import { queryOptions } from "@tanstack/react-query";
import type { operations } from "../../../../client/src/sdk/api.generated.ts";
import { api } from "../../api/client.ts";
import { unwrap } from "../../api/problem.ts";

// Failure groups (API.md §16): the same problem across tests and runs, one signature each.

export type FailureGroup =
  operations["listFailureGroups"]["responses"][200]["content"]["application/json"]["items"][number];
export type Occurrence =
  operations["listFailureOccurrences"]["responses"][200]["content"]["application/json"]["items"][number];

export interface FailureFilters {
  app?: string | undefined;
  plan?: string | undefined;
}

/** The groups, newest first (the API's order: last seen), one page of 100. */
export const failureGroupsQuery = (filters: FailureFilters) =>
  queryOptions({
    queryKey: ["failures", filters.app ?? null, filters.plan ?? null],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/failures", {
          params: { query: { package_name: filters.app, test_plan_id: filters.plan, limit: 100 } },
        }),
      ),
  });

/** One group's occurrences, newest first. */
export const occurrencesQuery = (signature: string, filters: FailureFilters) =>
  queryOptions({
    queryKey: ["failures", "occurrences", signature, filters.app ?? null, filters.plan ?? null],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/failures/{signature}/occurrences", {
          params: {
            path: { signature },
            query: { package_name: filters.app, test_plan_id: filters.plan, limit: 50 },
          },
        }),
      ),
  });

/** The failed tests of the example's run, to find the example's captures (its screenshot) as the run page does. */
export const failedTestsQuery = (runId: string) =>
  queryOptions({
    queryKey: ["execution", runId, "tests", "failed"],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/executions/{id}/tests", {
          params: { path: { id: runId }, query: { status: "failed", limit: 1000 } },
        }),
      ).items,
  });
