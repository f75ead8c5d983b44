import { queryOptions } from "@tanstack/react-query";
import type { operations } from "../../../../client/src/sdk/api.generated.ts";
import { api } from "../../api/client.ts";
import { unwrap } from "../../api/problem.ts";

export type TrendDay =
  operations["getTestPlanTrends"]["responses"][200]["content"]["application/json"]["days"][number];

/** The plan's last 30 days (API.md §16 "Trends"), days without runs left out. */
export const trendsQuery = (planId: string) =>
  queryOptions({
    queryKey: ["trends", planId],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/testplans/{id}/trends", { params: { path: { id: planId }, query: { days: 30 } } }),
      ).days,
  });
