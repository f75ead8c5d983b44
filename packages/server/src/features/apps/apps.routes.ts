import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { AppList, AppListQuery, AppParams, AppView, CreateAppBody } from "./apps.schemas.ts";
import { type AppsService, appView } from "./apps.service.ts";

export const appsRoutes: FastifyPluginAsyncTypebox<{ apps: AppsService }> = async (app, { apps }) => {
  app.post(
    "/v1/apps",
    {
      config: { auth: ["ci", "admin"] },
      schema: {
        summary: "Register an app",
        tags: ["apps"],
        body: CreateAppBody,
        response: { 201: AppView, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const created = await apps.create(principalOf(request).organizationId, request.body);
      return reply.code(201).send(appView(created));
    },
  );

  app.get(
    "/v1/apps",
    {
      schema: {
        summary: "List the organization's apps, newest first",
        tags: ["apps"],
        querystring: AppListQuery,
        response: { 200: AppList, ...ProblemResponses },
      },
    },
    async (request) => apps.list(principalOf(request).organizationId, request.query),
  );

  app.get(
    "/v1/apps/:package_name",
    {
      schema: {
        summary: "Get an app by its exact package name",
        tags: ["apps"],
        params: AppParams,
        response: { 200: AppView, ...ProblemResponses },
      },
    },
    async (request) =>
      appView(await apps.getWithVersions(principalOf(request).organizationId, request.params.package_name)),
  );
};
