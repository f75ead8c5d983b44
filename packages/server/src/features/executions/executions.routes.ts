import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import { ExecutionList, ExecutionListQuery, ExecutionParams, ExecutionView } from "./executions.schemas.ts";
import type { ExecutionsService } from "./executions.service.ts";

export const executionsRoutes: FastifyPluginAsyncTypebox<{ executions: ExecutionsService }> = async (
  app,
  { executions },
) => {
  app.get(
    "/v1/executions/:id",
    {
      schema: {
        summary: "Get an execution",
        tags: ["executions"],
        params: ExecutionParams,
        response: { 200: ExecutionView, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      return executions.view(organizationId, await executions.get(organizationId, request.params.id));
    },
  );

  app.get(
    "/v1/executions",
    {
      schema: {
        summary: "List executions, newest first",
        description:
          "Filters: test_plan_id, package_name, version, status, branch and commit (the trigger's ci metadata). Keyset-paginated with limit and cursor.",
        tags: ["executions"],
        querystring: ExecutionListQuery,
        response: { 200: ExecutionList, ...ProblemResponses },
      },
    },
    async (request) => executions.list(principalOf(request).organizationId, request.query),
  );

  app.post(
    "/v1/executions/:id/cancel",
    {
      config: { auth: ["ci", "admin"] },
      schema: {
        summary: "Cancel an execution",
        description:
          "A queued execution is cancelled at once. A running one gets cancel_requested: true and its agent stops it. A finished one is returned as it is.",
        tags: ["executions"],
        params: ExecutionParams,
        response: { 200: ExecutionView, ...ProblemResponses },
      },
    },
    async (request) => {
      const { organizationId } = principalOf(request);
      return executions.view(
        organizationId,
        await executions.cancel(organizationId, request.params.id, actorOf(principalOf(request))),
      );
    },
  );
};
