import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { ApiError, type ErrorCode, errorCatalog } from "../errors.ts";
import { Problem, ProblemResponses } from "./problem.schema.ts";

export const ProblemType = Type.Object({
  code: Problem.properties.code,
  title: Type.String(),
  status: Type.Integer({ description: "The HTTP status this code is answered with." }),
  retryable: Type.Boolean(),
  fix: Type.String({ description: "The usual remedy; a response may carry a more specific one." }),
});

/** Problem `type` URIs resolve here: what a code means and what to do about it. */
export const problemsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    "/problems/:code",
    {
      config: { auth: "public" },
      schema: {
        summary: "Describe an error code",
        tags: ["errors"],
        security: [],
        params: Type.Object({ code: Type.String({ maxLength: 64 }) }),
        response: { 200: ProblemType, ...ProblemResponses },
      },
    },
    async (request) => {
      const code = request.params.code;
      if (!Object.hasOwn(errorCatalog, code)) {
        throw new ApiError("route_not_found", { detail: "There is no such error code." });
      }
      const entry = errorCatalog[code as ErrorCode];
      return { code, title: entry.title, status: entry.status, retryable: entry.retryable, fix: entry.fix };
    },
  );
};
