import type { operations } from "./api.generated.ts";
import { segment, type Transport } from "./transport.ts";

/** A plan's schedule (API.md §15): when it runs, on which version, its next time and what became of the last. */
export type Schedule =
  operations["listSchedules"]["responses"][200]["content"]["application/json"]["items"][number];
export type CreateSchedule = NonNullable<
  operations["createSchedule"]["requestBody"]
>["content"]["application/json"];
export type UpdateSchedule = NonNullable<
  operations["updateSchedule"]["requestBody"]
>["content"]["application/json"];
export type ScheduleLastResult = NonNullable<Schedule["last_result"]>;

/**
 * Schedules of test plans as typed calls over a Testbay's transport (`schedulesApi(testbay.transport)`): the
 * token, pacing and retry rules of every other call apply (CLIENT.md's rules).
 *
 * @example
 * const schedules = schedulesApi(testbay.transport);
 * await schedules.create(planId, { cron: "0 2 * * *", timezone: "Europe/Berlin", version: "latest:branch=main" });
 */
export function schedulesApi(transport: Transport) {
  const body = async <T>(call: Parameters<Transport["json"]>[0]) => (await transport.json<T>(call)).body;
  return {
    /** `POST /testplans/{id}/schedules`: 201 with the next time it runs. Not resent: a resend would add a second. */
    create: (testPlanId: string, schedule: CreateSchedule): Promise<Schedule> =>
      body({ method: "POST", path: `/testplans/${segment(testPlanId)}/schedules`, json: schedule }),
    /** `GET /testplans/{id}/schedules`: the plan's schedules, oldest first (at most 20: one page). */
    list: async (testPlanId: string): Promise<Schedule[]> =>
      (
        await body<{ items: Schedule[] }>({
          method: "GET",
          path: `/testplans/${segment(testPlanId)}/schedules`,
        })
      ).items,
    /** `PATCH /schedules/{id}`: changes what is given; the same changes twice leave the same schedule. */
    update: (id: string, changes: UpdateSchedule): Promise<Schedule> =>
      body({ method: "PATCH", path: `/schedules/${segment(id)}`, json: changes, safeToResend: true }),
    /** `DELETE /schedules/{id}`: no time of it runs from now on. */
    delete: async (id: string): Promise<void> => {
      await transport.send({ method: "DELETE", path: `/schedules/${segment(id)}` });
    },
  };
}

export type SchedulesApi = ReturnType<typeof schedulesApi>;
