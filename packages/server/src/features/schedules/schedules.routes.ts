import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import {
  CreateScheduleBody,
  PlanScheduleParams,
  ScheduleList,
  ScheduleParams,
  ScheduleView,
  scheduleView,
  UpdateScheduleBody,
} from "./schedules.schemas.ts";
import type { SchedulesService } from "./schedules.service.ts";

/** Schedules start runs, so they are changed by those who trigger runs and change plans (testplans.routes.ts). */
const writers = ["ci", "admin"] as const;
const notFound =
  " Another organization's plan is test_plan_not_found and its schedule schedule_not_found (404), as unknown ones are.";

export const schedulesRoutes: FastifyPluginAsyncTypebox<{ schedules: SchedulesService }> = async (
  app,
  { schedules },
) => {
  app.post(
    "/v1/testplans/:id/schedules",
    {
      config: { auth: writers },
      schema: {
        summary: "Schedule runs of a test plan",
        description: `201 with the schedule and its next_run_at. At each time the plan is triggered once (whichever instance fires it) with ci.provider "schedule", on the version the schedule names; when there is none, that time is skipped and last_result says why. A wrong cron, time zone or version is 400 invalid_request with errors naming the field; a plan that is archived or deleted is test_plan_not_found; a plan may have 20 schedules (400 invalid_request, reason too_many_schedules).${notFound}`,
        tags: ["testplans"],
        params: PlanScheduleParams,
        body: CreateScheduleBody,
        response: { 201: ScheduleView, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const created = await schedules.create(
        principal.organizationId,
        request.params.id,
        request.body,
        principal.clientId,
        actorOf(principal),
      );
      return reply.code(201).send(scheduleView(created));
    },
  );

  app.get(
    "/v1/testplans/:id/schedules",
    {
      schema: {
        summary: "List a test plan's schedules",
        description: `Oldest first, each with next_run_at and last_result (what became of its last time: triggered, or skipped and why).${notFound}`,
        tags: ["testplans"],
        params: PlanScheduleParams,
        response: { 200: ScheduleList, ...ProblemResponses },
      },
    },
    async (request) => {
      const items = await schedules.list(principalOf(request).organizationId, request.params.id);
      return { items: items.map(scheduleView) };
    },
  );

  app.patch(
    "/v1/schedules/:id",
    {
      config: { auth: writers },
      schema: {
        summary: "Change a schedule",
        description: `Changes what is given. A new cron or timezone, or enabled: true, counts next_run_at from now; enabled: false clears it until the schedule is enabled again.${notFound}`,
        tags: ["testplans"],
        params: ScheduleParams,
        body: UpdateScheduleBody,
        response: { 200: ScheduleView, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const updated = await schedules.update(
        principal.organizationId,
        request.params.id,
        request.body,
        actorOf(principal),
      );
      return scheduleView(updated);
    },
  );

  app.delete(
    "/v1/schedules/:id",
    {
      config: { auth: writers },
      schema: {
        summary: "Delete a schedule",
        description: `204; no time of it fires from now on (a run it already queued goes on).${notFound}`,
        tags: ["testplans"],
        params: ScheduleParams,
        response: { 204: Type.Null({ description: "Deleted" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await schedules.delete(principal.organizationId, request.params.id, actorOf(principal));
      return reply.code(204).send(null);
    },
  );
};
