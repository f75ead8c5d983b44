import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import { QuarantineBody, QuarantineView, quarantineView, TestParams } from "./quarantine.schemas.ts";
import type { QuarantineService } from "./quarantine.service.ts";

/** PUT/DELETE /v1/tests/{test_id}/quarantine: members, admins and ci clients; viewers and agents get 403. */
export const quarantineRoutes: FastifyPluginAsyncTypebox<{ quarantines: QuarantineService }> = async (
  app,
  { quarantines },
) => {
  app.put(
    "/v1/tests/:test_id/quarantine",
    {
      config: { auth: ["ci", "admin"] },
      schema: {
        summary: "Quarantine a test",
        description:
          "A quarantined test still runs and is reported, but its failure does not fail its execution (summary.quarantined_failures counts such failures). Idempotent: a second PUT changes the reason and answers 200 again; quarantined_by and quarantined_at stay those of the first, so they say since when and by whom the test is quarantined (every change is in the audit log, test.quarantined). The test must have been reported by an agent in this organization: 404 test_not_found otherwise (also for another organization's test). Tests are quarantined per test id, that is per plan: the same test in another plan is another test.",
        tags: ["tests"],
        params: TestParams,
        body: QuarantineBody,
        response: { 200: QuarantineView, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const quarantine = await quarantines.quarantine(
        principal.organizationId,
        request.params.test_id,
        request.body.reason,
        actorOf(principal),
      );
      return quarantineView(quarantine);
    },
  );

  app.delete(
    "/v1/tests/:test_id/quarantine",
    {
      config: { auth: ["ci", "admin"] },
      schema: {
        summary: "Release a test from quarantine",
        description:
          "204 once the test is not quarantined: its failures fail executions again. Idempotent: releasing a test that is not quarantined (already released, or never) also answers 204 and changes nothing, so a retried DELETE is safe. A test id no agent has reported in this organization answers 404 test_not_found, as a mistyped id would otherwise look released. Audited as test.unquarantined (only when a quarantine ended).",
        tags: ["tests"],
        params: TestParams,
        response: { 204: Type.Null({ description: "Not quarantined" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await quarantines.release(principal.organizationId, request.params.test_id, actorOf(principal));
      return reply.code(204).send(null);
    },
  );
};
