import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import {
  CreateTestPlanBody,
  PatchTestPlanBody,
  TestPlanList,
  TestPlanListQuery,
  TestPlanParams,
  TestPlanView,
} from "./testplans.schemas.ts";
import { type TestPlansService, testPlanView } from "./testplans.service.ts";

const writers = ["ci", "admin"] as const;

export const testPlansRoutes: FastifyPluginAsyncTypebox<{ plans: TestPlansService }> = async (
  app,
  { plans },
) => {
  app.post(
    "/v1/testplans",
    {
      config: { auth: writers },
      schema: {
        summary: "Create a test plan",
        description:
          "Steps run in order on an agent: inspect (checks the binary's metadata), shell, instrumentation (Android, adb) and maestro. devices: [] runs once on the agent host; otherwise one device run per entry, each on a device of the app's platform.",
        tags: ["testplans"],
        body: CreateTestPlanBody,
        response: { 201: TestPlanView, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          testPlanView(
            await plans.create(
              principalOf(request).organizationId,
              request.body,
              actorOf(principalOf(request)),
            ),
          ),
        ),
  );

  app.get(
    "/v1/testplans",
    {
      schema: {
        summary: "List test plans, newest first",
        description: "Without state, lists active and archived plans; state=deleted lists the deleted ones.",
        tags: ["testplans"],
        querystring: TestPlanListQuery,
        response: { 200: TestPlanList, ...ProblemResponses },
      },
    },
    async (request) => plans.list(principalOf(request).organizationId, request.query),
  );

  app.get(
    "/v1/testplans/:id",
    {
      schema: {
        summary: "Get a test plan in any state",
        tags: ["testplans"],
        params: TestPlanParams,
        response: { 200: TestPlanView, ...ProblemResponses },
      },
    },
    async (request) => testPlanView(await plans.get(principalOf(request).organizationId, request.params.id)),
  );

  app.patch(
    "/v1/testplans/:id",
    {
      config: { auth: writers },
      schema: {
        summary: "Change a test plan",
        description:
          "Any of name, devices, steps, timeout_seconds, max_attempts; a deleted plan must be restored first.",
        tags: ["testplans"],
        params: TestPlanParams,
        body: PatchTestPlanBody,
        response: { 200: TestPlanView, ...ProblemResponses },
      },
    },
    async (request) =>
      testPlanView(
        await plans.update(
          principalOf(request).organizationId,
          request.params.id,
          request.body,
          actorOf(principalOf(request)),
        ),
      ),
  );

  // Archiving, restoring and deleting only move a plan to another state (TestPlansService.changeState), so one
  // route shape serves all three; the delete is soft (restorable for 30 days).
  for (const [method, url, state, summary] of [
    [
      "POST",
      "/v1/testplans/:id/archive",
      "archived",
      "Archive a test plan: it can no longer be triggered until restored",
    ],
    ["POST", "/v1/testplans/:id/restore", "active", "Restore an archived or deleted plan"],
    ["DELETE", "/v1/testplans/:id", "deleted", "Delete a test plan (restorable for 30 days)"],
  ] as const) {
    app.route({
      method,
      url,
      config: { auth: writers },
      schema: {
        summary,
        tags: ["testplans"],
        params: TestPlanParams,
        response: { 200: TestPlanView, ...ProblemResponses },
      },
      handler: async (request) =>
        testPlanView(
          await plans.changeState(
            principalOf(request).organizationId,
            request.params.id,
            state,
            actorOf(principalOf(request)),
          ),
        ),
    });
  }
};
