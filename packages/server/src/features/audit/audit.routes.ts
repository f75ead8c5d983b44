import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { AuditPage, AuditQuery } from "./audit.schemas.ts";
import type { AuditLog } from "./audit-log.ts";

export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditLog }> = async (app, { audit }) => {
  app.get(
    "/v1/audit",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "The organization's audit log",
        description:
          "Who (a signed-in person's email, a client's ID, testbay-server for the admin CLI, or single-sign-on for what the identity provider decided: a first sign-in, a role from the role claim) triggered or cancelled runs, created, changed, archived, deleted or restored plans, created, disabled, enabled or rotated clients, and created, disabled or enabled people or changed their role: newest first, paged by cursor. Admins only.",
        tags: ["audit"],
        querystring: AuditQuery,
        response: { 200: AuditPage, ...ProblemResponses },
      },
    },
    async (request) => audit.list(principalOf(request).organizationId, request.query),
  );
};
