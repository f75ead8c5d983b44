import formbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Clock } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import type { ClientsService } from "../clients/index.ts";
import {
  chargeRequest,
  policyForRole,
  type RateLimiter,
  type RateLimitPolicies,
} from "../ratelimit/index.ts";
import { TokenRequest, TokenResponse } from "./auth.schemas.ts";
import { invalidToken, type TokenService, tokenLifetimeSeconds } from "./tokens.ts";

export interface AuthRoutesOptions {
  tokens: TokenService;
  clients: ClientsService;
  limiter: RateLimiter;
  policies: RateLimitPolicies;
  clock: Clock;
}

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, options) => {
  const { tokens, clients, limiter, policies } = options;
  // Form bodies are for this endpoint only (OAuth clients send them); everything else speaks JSON.
  await app.register(formbody, { bodyLimit: 8192 });

  app.post(
    "/v1/oauth/token",
    {
      config: { auth: "public", rateLimit: "route", oauthErrors: true },
      bodyLimit: 8192,
      schema: {
        summary: "Get an access token (client credentials)",
        description:
          "Exchanges a client ID and secret for a 24-hour token. Ask once per pipeline run: token calls count toward the client's rate limit.",
        tags: ["auth"],
        security: [],
        body: TokenRequest,
        response: { 200: TokenResponse, ...ProblemResponses },
      },
      // The call is charged to the client it names, before its body is validated, so malformed calls count too.
      preValidation: async (request, reply) => {
        const body = request.body as { client_id?: unknown } | undefined;
        const clientId =
          typeof body?.client_id === "string" && body.client_id.length <= 128 ? body.client_id : undefined;
        const client = clientId ? await clients.findForAuthentication(clientId) : undefined;
        const key = clientId ? `client:${clientId}` : `ip:${request.ip}`;
        await chargeRequest(limiter, reply, key, policyForRole(policies, client?.role));
      },
    },
    async (request, reply) => {
      const { grant_type, client_id, client_secret, audience } = request.body;
      if (grant_type !== undefined && grant_type !== "client_credentials") {
        throw new ApiError("invalid_request", {
          detail: `grant_type ${JSON.stringify(grant_type.slice(0, 50))} is not supported.`,
          fix: 'Use grant_type "client_credentials", or leave it out.',
          extra: {
            error: "unsupported_grant_type",
            errors: [{ path: "/grant_type", in: "body", message: "must be client_credentials" }],
          },
        });
      }
      // The audience is no secret, so a wrong one is named as such: the most common setup mistake.
      if (audience !== tokens.audience) {
        throw invalidToken("invalid_client", "The audience is not this server's audience.", tokens.audience);
      }
      const client = await clients.authenticate(client_id, client_secret);
      if (!client) {
        throw invalidToken("invalid_client", "Unknown client ID or wrong client secret.", tokens.audience);
      }
      if (client.disabledAt) {
        throw invalidToken("client_disabled", "This client is disabled.", tokens.audience);
      }
      const { token, expiresAt } = await tokens.issue({
        clientId: client.id,
        organizationId: client.organizationId,
        role: client.role,
      });
      // RFC 6749 §5.1: token responses must not be cached.
      reply.header("cache-control", "no-store").header("pragma", "no-cache");
      return {
        access_token: token,
        token_type: "api-key" as const,
        expires_in: tokenLifetimeSeconds,
        expires_at: new Date(expiresAt).toISOString(),
      };
    },
  );
};
