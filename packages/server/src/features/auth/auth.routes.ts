import formbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Clock } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import type { ClientsService } from "../clients/index.ts";
import {
  chargeFailure,
  chargeRequest,
  policyForRole,
  type RateLimiter,
  type RateLimitPolicies,
  refuseWhenFailuresSpent,
} from "../ratelimit/index.ts";
import { OAuthProblemResponses, TokenRequest, TokenResponse } from "./auth.schemas.ts";
import { metadataRoutes } from "./authorization-server-metadata.ts";
import {
  basicChallenge,
  clientCredentials,
  failedCredentialsKey,
  namedClientId,
} from "./client-credentials.ts";
import { type InvalidTokenReason, invalidToken, type TokenService, tokenLifetimeSeconds } from "./tokens.ts";

export interface AuthRoutesOptions {
  tokens: TokenService;
  clients: ClientsService;
  limiter: RateLimiter;
  policies: RateLimitPolicies;
  clock: Clock;
  /** TESTBAY_PUBLIC_URL, for the issuer and token endpoint in the RFC 8414 metadata. */
  publicUrl?: string | undefined;
  /**
   * Names this deployment in the per-address keys (its signing key's ID, as in registerRateLimiting): a client
   * ID is unique everywhere, an address is not.
   */
  deployment: string;
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
          "Exchanges a client ID and secret for a 24-hour token. The client authenticates with HTTP Basic (client_secret_basic: Authorization: Basic base64(urlencode(client_id):urlencode(client_secret))) or with client_id and client_secret in the JSON or form body (client_secret_post), never both. Errors are application/json with OAuth's error and error_description beside the problem members. Ask once per pipeline run: a successful token call counts toward the client's rate limit. Failed calls (wrong secret or audience, a disabled client, a malformed body) count in a bucket of their own, per client ID and caller address: past it, 429 rate_limited with Retry-After, while the client's other requests and its token calls from elsewhere go on.",
        tags: ["auth"],
        security: [],
        body: TokenRequest,
        response: { 200: TokenResponse, ...OAuthProblemResponses },
      },
      // A call naming no client is charged to its address at once. One naming a client (in the body or by
      // Basic) is refused, before anything is checked, once the failed calls of that client ID from that address
      // are spent; the client's own bucket is charged only when it succeeds (in the handler).
      preValidation: async (request, reply) => {
        const clientId = namedClientId(request.headers.authorization, request.body);
        if (!clientId) {
          await chargeRequest(limiter, reply, `ip:${options.deployment}:${request.ip}`, policies.default);
          return;
        }
        await refuseWhenFailuresSpent(
          limiter,
          reply,
          failedCredentialsKey(clientId, request.ip),
          policies.default,
          `Too many failed token calls for this client ID from this address: at most ${policies.default.burst} at once or ${policies.default.perSecond} per second over time.`,
        );
      },
      // Every call naming a client that is answered with an error but 429 (wrong secret or audience, a disabled
      // client, a malformed body) is a failed call: charged before the answer leaves, so the next call sees it.
      onSend: async (request, reply) => {
        if (reply.statusCode < 400 || reply.statusCode === 429 || reply.statusCode >= 500) return;
        const clientId = namedClientId(request.headers.authorization, request.body);
        if (clientId)
          await chargeFailure(limiter, reply, failedCredentialsKey(clientId, request.ip), policies.default);
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
      // A successful call counts toward the client's own limit, like every request it makes.
      await chargeRequest(limiter, reply, `client:${client.id}`, policyForRole(policies, client.role));
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
