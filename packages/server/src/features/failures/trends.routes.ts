import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Kysely } from "kysely";
import { Type } from "typebox";
import type { Clock } from "../../clock.ts";
import type { Database } from "../../db/schema.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import type { TestPlansService } from "../testplans/index.ts";
import { TestPlanParams } from "../testplans/testplans.schemas.ts";
import { planTrends } from "./trends.ts";

const TrendDayView = Type.Object({
  date: Type.String({ format: "date", description: "The UTC day the executions were triggered" }),
  executions: Type.Integer({ description: "The plan's finished executions triggered that day" }),
  passed: Type.Integer({ description: "Those that passed" }),
  pass_rate: Type.Number({ minimum: 0, maximum: 1, description: "passed ÷ executions" }),
  p50_ms: Type.Union([Type.Integer(), Type.Null()], {
    description: "Median execution duration, start to finish",
  }),
  p95_ms: Type.Union([Type.Integer(), Type.Null()], { description: "95th percentile of the same durations" }),
  flaky_tests: Type.Integer({
    description: "Tests that both failed and passed within one execution that day",
  }),
  new_failure_groups: Type.Integer({
    description: "Failure groups (GET /v1/failures) first seen in this plan that day",
  }),
});

const TrendsQuery = Type.Object(
  {
    days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 365, default: 30, description: "UTC days back, today included" }),
    ),
  },
  { additionalProperties: false },
);

/** A plan's day-by-day trends (API.md §16): pass rate, durations, flaky tests and new failure groups. */
export const trendsRoutes: FastifyPluginAsyncTypebox<{
  db: Kysely<Database>;
  clock: Clock;
  plans: TestPlansService;
}> = async (app, { db, clock, plans }) => {
  app.get(
    "/v1/testplans/:id/trends",
    {
      schema: {
        summary: "A test plan's trends, day by day",
        description:
          "For each UTC day of the last `days` (default 30, today included) on which the plan had finished executions: how many, how many passed, the pass rate (passed ÷ executions, 0–1), the p50 and p95 of their durations, the tests that were flaky (failed and passed within one execution) and the failure groups first seen in the plan that day. Days without executions are left out; oldest first. Another organization's plan is test_plan_not_found (404), as unknown ones are.",
        tags: ["testplans"],
        params: TestPlanParams,
        querystring: TrendsQuery,
        response: { 200: Type.Object({ days: Type.Array(TrendDayView) }), ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      // Another organization's plan, or none: 404 like GET /testplans/{id}.
      await plans.get(organizationId, request.params.id);
      const days = await planTrends(
        db,
        organizationId,
        request.params.id,
        request.query.days ?? 30,
        new Date(clock.now()),
      );
      return { days };
    },
  );
};
