import formbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Clock } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import type { ClientsService } from "../clients/index.ts";
import {
  chargeRequest,
  policyForRole,
  type RateLimiter,
  type RateLimitPolicies,
} from "../ratelimit/index.ts";
import { OAuthProblemResponses, TokenRequest, TokenResponse } from "./auth.schemas.ts";
import { metadataRoutes } from "./authorization-server-metadata.ts";
import { basicChallenge, clientCredentials, namedClientId } from "./client-credentials.ts";
import { type InvalidTokenReason, invalidToken, type TokenService, tokenLifetimeSeconds } from "./tokens.ts";

export interface AuthRoutesOptions {
  tokens: TokenService;
  clients: ClientsService;
  limiter: RateLimiter;
  policies: RateLimitPolicies;
  clock: Clock;
  /** TESTBAY_PUBLIC_URL, for the issuer and token endpoint in the RFC 8414 metadata. */
  publicUrl?: string | undefined;
}

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, options) => {
  const { tokens, clients, limiter, policies } = options;
  // Form bodies are for this endpoint only (OAuth clients send them); everything else speaks JSON.
  await app.register(formbody, { bodyLimit: 8192 });
  await app.register(metadataRoutes, { publicUrl: options.publicUrl });

  app.post(
    "/v1/oauth/token",
    {
      config: { auth: "public", rateLimit: "route", oauthErrors: true },
      bodyLimit: 8192,
      schema: {
        summary: "Get an access token (client credentials)",
        description:
          "Exchanges a client ID and secret for a 24-hour token. The client authenticates with HTTP Basic (client_secret_basic: Authorization: Basic base64(urlencode(client_id):urlencode(client_secret))) or with client_id and client_secret in the JSON or form body (client_secret_post), never both. Errors are application/json with OAuth's error and error_description beside the problem members. Ask once per pipeline run: token calls count toward the client's rate limit.",
        tags: ["auth"],
        security: [],
        body: TokenRequest,
        response: { 200: TokenResponse, ...OAuthProblemResponses },
      },
      // The call is charged to the client it names (in the body or by Basic), before its body is validated,
      // so malformed calls count too.
      preValidation: async (request, reply) => {
        const clientId = namedClientId(request.headers.authorization, request.body);
        const client = clientId ? await clients.findForAuthentication(clientId) : undefined;
        const key = clientId ? `client:${clientId}` : `ip:${request.ip}`;
        await chargeRequest(limiter, reply, key, policyForRole(policies, client?.role));
      },
    },
    async (request, reply) => {
      const { grant_type, audience } = request.body;
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
      const credentials = clientCredentials(request.headers.authorization, request.body);
      // RFC 6749 §5.2: a 401 to a client that used the Authorization header names the scheme to use.
      const refuse = (reason: InvalidTokenReason, detail: string) => {
        const error = invalidToken(reason, detail, tokens.audience);
        if (credentials.method === "client_secret_basic") error.headers["www-authenticate"] = basicChallenge;
        return error;
      };
      // The audience is no secret, so a wrong one is named as such: the most common setup mistake.
      if (audience !== tokens.audience) {
        throw refuse("invalid_client", "The audience is not this server's audience.");
      }
      const client = await clients.authenticate(credentials.clientId, credentials.clientSecret);
      if (!client) throw refuse("invalid_client", "Unknown client ID or wrong client secret.");
      if (client.disabledAt) throw refuse("client_disabled", "This client is disabled.");
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
