import type { FastifyReply, FastifyRequest } from "fastify";
import type { ClientRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import {
  basicChallenge,
  clientOfToken,
  failedCredentialsKey,
  parseBasicAuthorization,
  type TokenService,
} from "../auth/index.ts";
import type { ClientRecord, ClientsService } from "../clients/index.ts";
import {
  chargeFailure,
  chargeRequest,
  policyForRole,
  type RateLimiter,
  type RateLimitPolicies,
  refuseWhenFailuresSpent,
} from "../ratelimit/index.ts";
import { WebDriverError } from "./w3c-errors.ts";

/** Who opens a session: the client its credentials name. */
export interface WebDriverCaller {
  clientId: string;
  organizationId: string;
  role: ClientRole;
}

/** API.md §12: sessions are for CI pipelines and administrators; agents serve them. */
const sessionRoles: readonly ClientRole[] = ["ci", "admin"];

/**
 * The WebDriver client's refusal of its credentials. W3C WebDriver has no error code for authentication, and
 * API.md §12 names none: the answer is HTTP's 401 with `invalid argument`, the W3C code of a request the client
 * must change before sending it again (the credentials are part of the request). Not `unknown error`: that one is
 * a 500, which clients read as the server's fault and some retry.
 */
function unauthenticated(message: string, basic: boolean): WebDriverError {
  return new WebDriverError("invalid argument", message, {
    status: 401,
    headers: basic ? { "www-authenticate": basicChallenge } : {},
  });
}

export interface WebDriverAuthenticationOptions {
  tokens: TokenService;
  clients: ClientsService;
  limiter: RateLimiter;
  policies: RateLimitPolicies;
}

/**
 * Authenticates a new session (API.md §12): `x-api-key` with a token, as every /v1 call, or HTTP Basic with the
 * client's ID and secret (checked as the token endpoint checks them: hashed secrets, compared in constant time,
 * unknown IDs costing as much as wrong secrets, ClientsService.authenticate). The request is then charged to the
 * client's rate limit. Every refusal is a WebDriverError: WebDriver clients read only W3C bodies.
 */
export class WebDriverAuthentication {
  constructor(private readonly options: WebDriverAuthenticationOptions) {}

  async admit(request: FastifyRequest, reply: FastifyReply): Promise<WebDriverCaller> {
    const apiKey = request.headers["x-api-key"];
    const client =
      typeof apiKey === "string" && apiKey !== ""
        ? await this.byToken(apiKey)
        : await this.byBasic(request, reply);
    if (!sessionRoles.includes(client.role)) {
      throw new WebDriverError(
        "invalid argument",
        `a client with role ${client.role} may not open WebDriver sessions: use the credentials of a ci or admin client`,
        { status: 403 },
      );
    }
    const { limiter, policies } = this.options;
    try {
      await chargeRequest(limiter, reply, `client:${client.id}`, policyForRole(policies, client.role));
    } catch (error) {
      throw asWebDriverError(error);
    }
    return { clientId: client.id, organizationId: client.organizationId, role: client.role };
  }

  /** The client a token names, checked as the /v1 hook checks it (features/auth/token-client.ts). */
  private async byToken(token: string): Promise<ClientRecord> {
    const { tokens, clients } = this.options;
    try {
      const verified = tokens.verifiedBefore(token) ?? (await tokens.verify(token));
      return clientOfToken(verified, await clients.findForAuthentication(verified.clientId), tokens.audience);
    } catch (error) {
      if (error instanceof ApiError) throw unauthenticated(`x-api-key: ${error.detail} ${error.fix}`, false);
      throw error;
    }
  }

  private async byBasic(request: FastifyRequest, reply: FastifyReply): Promise<ClientRecord> {
    let credentials: ReturnType<typeof parseBasicAuthorization>;
    try {
      credentials = parseBasicAuthorization(request.headers.authorization);
    } catch (error) {
      if (error instanceof ApiError) throw unauthenticated(error.detail, true);
      throw error;
    }
    if (!credentials) {
      throw unauthenticated(
        "no credentials: send the client's ID and secret as HTTP Basic (webdriverio's user and key, or http://CLIENT_ID:SECRET@host/wd/hub), or a token as x-api-key",
        true,
      );
    }
    const { limiter, policies, clients } = this.options;
    // Counted where failed token calls are (API.md §1): guessing a secret here is no cheaper than there.
    const failures = failedCredentialsKey(credentials.clientId, request.ip);
    try {
      await refuseWhenFailuresSpent(
        limiter,
        reply,
        failures,
        policies.default,
        `Too many failed logins for this client ID from this address: at most ${policies.default.burst} at once or ${policies.default.perSecond} per second over time.`,
      );
    } catch (error) {
      throw asWebDriverError(error);
    }
    const client = await clients.authenticate(credentials.clientId, credentials.clientSecret);
    if (!client || client.disabledAt) {
      await chargeFailure(limiter, reply, failures, policies.default);
      throw unauthenticated(
        client
          ? "this client is disabled"
          : "unknown client ID or wrong client secret (HTTP Basic: the client's ID and secret)",
        true,
      );
    }
    return client;
  }
}

/** A rate limit refusal (ApiError rate_limited) as the W3C body a WebDriver client reads, with Retry-After. */
export function asWebDriverError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.code === "rate_limited") {
    return new WebDriverError(
      "unknown error",
      `rate limited: ${error.detail} Retry after the Retry-After header's seconds.`,
      {
        status: 429,
        headers: error.headers,
      },
    );
  }
  return new WebDriverError("unknown error", `${error.detail} ${error.fix}`);
}
