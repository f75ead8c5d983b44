import { queryOptions } from "@tanstack/react-query";
import type { operations } from "../../../client/src/sdk/api.generated.ts";
import { api } from "./client.ts";
import { unwrap } from "./problem.ts";

export type TestHistory =
  operations["listTestHistory"]["responses"][200]["content"]["application/json"]["items"][number];

/**
 * The plan's tests over its last finished runs (GET /v1/tests), by test id: one request for a run's page, read
 * for all its failures. Keyed by whether the run has finished rather than under ["execution", id], so a live
 * run's events do not read it again: it changes when the run finishes (the run joins the history), once.
 */
export const testHistoryQuery = (planId: string, runFinished: boolean) =>
  queryOptions({
    queryKey: ["test-history", planId, runFinished],
    queryFn: async () => {
      // Most failures first: a run's failing tests are at the top, well within one page of 1,000.
      const page = unwrap(
        await api.GET("/v1/tests", { params: { query: { test_plan_id: planId, limit: 1000 } } }),
      );
      return new Map(page.items.map((test) => [test.id, test]));
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
