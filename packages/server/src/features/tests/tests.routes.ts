import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type TSchema, Type } from "typebox";
import { ApiError } from "../../errors.ts";
import { decodeCursor, encodeCursor } from "../../http/pagination.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { TestPlanId } from "../testplans/testplans.schemas.ts";
import { QuarantineView, quarantineView } from "./quarantine.schemas.ts";
import type { ListedTest, TestHistoryService } from "./test-history.service.ts";

const TestStatus = Type.Union(["passed", "failed", "errored", "skipped"].map((s) => Type.Literal(s)));
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const TestHistoryItem = Type.Object({
  id: Type.String({
    description: "The test's id within its plan (the id GET /executions/{id}/tests gives it)",
  }),
  classname: Type.String(),
  name: Type.String(),
  runs: Type.Integer({ description: "Executions of the window it ran in" }),
  failures: Type.Integer({ description: "Executions whose final status for it was failed or errored" }),
  flaky_runs: Type.Integer({ description: "Executions where it passed in the end after failing first" }),
  flaky_rate: Type.Number({ description: "flaky_runs ÷ runs" }),
  p50_ms: Nullable(
    Type.Integer({ description: "Median duration of its final results (skipped ones aside)" }),
  ),
  p80_ms: Nullable(Type.Integer({ description: "80th percentile of the same durations" })),
  last_status: Nullable(TestStatus),
  last_execution_id: Nullable(
    Type.String({
      description:
        "The execution last_status comes from; null for a quarantined test that did not run in the window",
    }),
  ),
  last_run_at: Nullable(
    Type.String({ format: "date-time", description: "When that execution was triggered" }),
  ),
  first_seen_at: Nullable(
    Type.String({
      format: "date-time",
      description: "When the oldest execution of the window it ran in was triggered",
    }),
  ),
  new: Type.Boolean({ description: "It ran only in the newest execution of the window" }),
  quarantined: Type.Boolean({
    description:
      "It is quarantined now (PUT /v1/tests/{test_id}/quarantine): its failures do not fail executions",
  }),
  quarantine: Type.Union([QuarantineView, Type.Null()], {
    description: "Who quarantined it, when and why; null when it is not quarantined",
  }),
});

const TestHistoryPage = Type.Object({
  items: Type.Array(TestHistoryItem),
  next_cursor: Nullable(Type.String()),
});

const TestHistoryQuery = Type.Object(
  {
    test_plan_id: TestPlanId,
    window: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 20,
        description: "How many of the plan's last finished executions to look at",
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: "next_cursor of the previous page" })),
  },
  { additionalProperties: false },
);

/**
 * The cursor holds the page's last test: its id and failure count (names can be 1,000 characters, too long
 * for a cursor). The next page starts right after that test; if a run finished in between and the test left
 * the window, after the tests with as many failures or more.
 */
const cursorOf = (t: ListedTest) => encodeCursor({ createdAt: String(t.failures), id: t.id });

function pageStart(all: readonly ListedTest[], cursor: string | undefined): number {
  const position = decodeCursor(cursor);
  if (!position) return 0;
  const failures = Number(position.createdAt);
  if (!/^t_[0-9a-f]{24}$/.test(position.id) || !Number.isInteger(failures) || failures < 0) {
    throw new ApiError("invalid_request", {
      detail: "The cursor is not one this list handed out.",
      fix: "Pass next_cursor from the previous page of GET /v1/tests unchanged, or leave cursor out to start from the top.",
      extra: { errors: [{ path: "/cursor", in: "querystring", message: "is not a valid cursor" }] },
    });
  }
  const last = all.findIndex((t) => t.id === position.id);
  if (last >= 0) return last + 1;
  const fewer = all.findIndex((t) => t.failures < failures);
  return fewer < 0 ? all.length : fewer;
}

const itemView = (test: ListedTest) => ({
  ...test,
  quarantine: test.quarantine && quarantineView(test.quarantine),
});

/** A plan's tests over its recent runs: is a failure new, a regression or a flaky test acting up? */
export const testsRoutes: FastifyPluginAsyncTypebox<{ history: TestHistoryService }> = async (
  app,
  { history },
) => {
  app.get(
    "/v1/tests",
    {
      schema: {
        summary: "A test plan's tests and their history",
        description:
          "One item per test seen in the plan's last `window` finished executions (default 20): in how many it ran, failed (its final status failed or errored) and was flaky (passed after failing in the same execution), its p50/p80 duration, its last status, whether it is new (seen only in the newest execution), and whether it is quarantined (with who quarantined it, when and why). A quarantined test that did not run in the window is listed too, with runs 0 and no last run (last_status, last_execution_id, last_run_at and first_seen_at null), so that it can be released. Most failures first, then by name; paged by cursor.",
        tags: ["tests"],
        querystring: TestHistoryQuery,
        response: { 200: TestHistoryPage, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      const { test_plan_id: testPlanId, window = 20, limit = 100, cursor } = request.query;
      const all = await history.list(organizationId, testPlanId, window);
      const start = pageStart(all, cursor);
      const items = all.slice(start, start + limit);
      const last = items.at(-1);
      return {
        items: items.map(itemView),
        next_cursor: start + limit < all.length && last ? cursorOf(last) : null,
      };
    },
  );
};
