import { queryOptions } from "@tanstack/react-query";
import type { operations } from "../../../../client/src/sdk/api.generated.ts";
import { api } from "../../api/client.ts";
import { ApiProblem, unwrap } from "../../api/problem.ts";
import type { Problem } from "../../api/types.ts";

// A plan's schedules (API.md §15 "Scheduled runs"): listed on the plan's page, added, enabled or disabled, deleted.

export type Schedule =
  operations["listSchedules"]["responses"][200]["content"]["application/json"]["items"][number];
export type NewSchedule = operations["createSchedule"]["requestBody"]["content"]["application/json"];
export type SchedulePatch = operations["updateSchedule"]["requestBody"]["content"]["application/json"];

export const schedulesQuery = (planId: string) =>
  queryOptions({
    queryKey: ["schedules", planId],
    queryFn: async () =>
      unwrap(await api.GET("/v1/testplans/{id}/schedules", { params: { path: { id: planId } } })).items,
  });

export async function createSchedule(planId: string, body: NewSchedule): Promise<Schedule> {
  return unwrap(await api.POST("/v1/testplans/{id}/schedules", { params: { path: { id: planId } }, body }));
}

export async function updateSchedule(id: string, body: SchedulePatch): Promise<Schedule> {
  return unwrap(await api.PATCH("/v1/schedules/{id}", { params: { path: { id } }, body }));
}

/** 204 on success: nothing to unwrap. */
export async function deleteSchedule(id: string): Promise<void> {
  const result = await api.DELETE("/v1/schedules/{id}", { params: { path: { id } } });
  if (result.response.ok) return;
  const problem = typeof result.error === "object" && result.error !== null ? result.error : {};
  throw new ApiProblem(result.response.status, problem as Partial<Problem>);
}
