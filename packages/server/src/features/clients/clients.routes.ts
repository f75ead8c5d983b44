import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { policyForRole, type RateLimitPolicies } from "../ratelimit/index.ts";
import { clientAdminRoutes } from "./client-admin.routes.ts";
import { clientView } from "./client-view.ts";
import { ClientIdParams, ClientView, WhoAmI } from "./clients.schemas.ts";
import type { ClientsService } from "./clients.service.ts";

export const clientsRoutes: FastifyPluginAsyncTypebox<{
  clients: ClientsService;
  /** For GET /v1/me's limits: the values the server enforces, read from its configuration. */
  policies: RateLimitPolicies;
  maxUploadBytes: number;
}> = async (app, { clients, policies, maxUploadBytes }) => {
  // The same for every caller of a role: built once, not per request.
  const limitsOf = (policy: RateLimitPolicies[keyof RateLimitPolicies]) => ({
    max_upload_bytes: maxUploadBytes,
    rate_limit: { burst: policy.burst, per_second: policy.perSecond },
  });
  const limits = { agent: limitsOf(policies.agent), default: limitsOf(policies.default) };

  // A token's requests all carry the same expiry: the last one formatted is kept, a string per token saved.
  let expiry = Number.NaN;
  let expiryIso = "";
  const isoExpiry = (ms: number): string => {
    if (ms !== expiry) {
      expiryIso = new Date(ms).toISOString();
      expiry = ms;
    }
    return expiryIso;
  };

  app.get(
    "/v1/me",
    {
      schema: {
        summary: "Who am I",
        description:
          "The calling client, its organization and role, and the limits that apply to it (upload size, rate limit): a cheap way to check a token.",
        tags: ["auth"],
        response: { 200: WhoAmI, ...ProblemResponses },
      },
    },
    // Synchronous: Fastify sends a plain return value at once, where a promise would cost a turn of the queue.
    (request) => {
      // The authentication hook has just loaded the client: no second lookup.
      const principal = principalOf(request);
      return {
        client_id: principal.clientId,
        role: principal.role,
        organization: { id: principal.organizationId, name: principal.organizationName },
        token_expires_at: isoExpiry(principal.tokenExpiresAt),
        limits: policyForRole(policies, principal.role) === policies.agent ? limits.agent : limits.default,
      };
    },
  );

  app.get(
    "/v1/clients",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "List the organization's clients",
        tags: ["clients"],
        response: { 200: Type.Object({ items: Type.Array(ClientView) }), ...ProblemResponses },
      },
    },
    async (request) => ({
      items: (await clients.listClients(principalOf(request).organizationId)).map(clientView),
    }),
  );

  app.get(
    "/v1/clients/:client_id",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "Get one of the organization's clients",
        tags: ["clients"],
        params: ClientIdParams,
        response: { 200: ClientView, ...ProblemResponses },
      },
    },
    async (request) =>
      clientView(await clients.getClient(principalOf(request).organizationId, request.params.client_id)),
  );

  // Creating, disabling, enabling and rotating: what the admin CLI does, for admins over HTTP.
  await app.register(clientAdminRoutes, { clients });
};
