import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiError } from "../../errors.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { ExecutionParams, ExecutionView } from "./executions.schemas.ts";
import type { ExecutionsService } from "./executions.service.ts";

/** Where a session's result is kept: the sessions feature (features/sessions/sessions.repo.ts). */
export interface SessionResults {
  setResult(executionId: string, status: "passed" | "failed", reason: string | null): Promise<void>;
}

export const SessionResultBody = Type.Object(
  {
    status: Type.Union([Type.Literal("passed"), Type.Literal("failed")]),
    reason: Type.Optional(Type.String({ maxLength: 2000, description: "Why, as people will read it" })),
  },
  { additionalProperties: false },
);

/**
 * `POST /v1/executions/{id}/result` (API.md §12): the client of a WebDriver session says whether its tests
 * passed. Stored with the session; it decides the execution's status when the session's device run completes
 * (instead of passed for a DELETE, errored for the other ends). A test plan's run: 409 not_a_session.
 */
export const sessionResultRoutes: FastifyPluginAsyncTypebox<{
  executions: ExecutionsService;
  results: SessionResults;
}> = async (app, { executions, results }) => {
  app.post(
    "/v1/executions/:id/result",
    {
      config: { auth: ["ci", "admin"] },
      schema: {
        summary: "Set a WebDriver session's result",
        description:
          'For an execution of kind session only: {status: passed|failed, reason?} is what the session\'s status becomes when it ends (else passed when ended by DELETE, cancelled when cancelled, errored otherwise). The last call before the end stands. The same as the script testbay: {"action": "setSessionStatus", …} through /execute/sync. 409 not_a_session for a test plan\'s run.',
        tags: ["executions"],
        params: ExecutionParams,
        body: SessionResultBody,
        response: { 200: ExecutionView, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      const execution = await executions.get(organizationId, request.params.id);
      if (execution.kind !== "session") {
        throw new ApiError("not_a_session", {
          detail: `Execution ${execution.id} is a test plan's run: its status comes from its tests.`,
        });
      }
      await results.setResult(execution.id, request.body.status, request.body.reason ?? null);
      return executions.view(organizationId, execution);
    },
  );
};
