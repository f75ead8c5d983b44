import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import type { ClientRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import type { ClientRecord, ClientsService } from "../clients/index.ts";
import { clientOfToken } from "./token-client.ts";
import { invalidToken, type TokenService, type VerifiedToken } from "./tokens.ts";

/**
 * Authenticates a request that has no `x-api-key` by a signed-in person's session cookie (features/people).
 * Kept as an interface so that authentication does not depend on how sessions are kept.
 */
export interface SessionAuthentication {
  /** The session ID from the request's cookie, or undefined when it has none. */
  sessionIdOf(request: FastifyRequest): string | undefined;
  /**
   * Resumes the session, sets the principal and checks the route's roles and, for changes, CSRF. Rejects
   * with a 401 when the session has ended, or a 403.
   */
  admit(
    request: FastifyRequest,
    sessionId: string,
    allowed: readonly ClientRole[] | undefined,
  ): Promise<void>;
}

/** Levels at which request logs are written; below them a child logger per request is wasted work. */
const verboseLevels = new Set(["info", "debug", "trace"]);

/**
 * Authenticates every request to a non-public route from its `x-api-key` header, then checks the route's
 * roles. A valid token is not enough: its client must still exist and be enabled, as stored when the
 * request arrived (ClientsService.findForAuthentication).
 *
 * The hook runs on every request, so it is written with `done` rather than as an async function: a token
 * verified before is checked synchronously, and the one asynchronous step, the client lookup, costs one
 * promise shared by the requests of the same client that arrived together.
 *
 * A request without `x-api-key` but with a session cookie is a person's from the dashboard: `sessions`
 * decides it. With `x-api-key` the cookie is never looked at, so machines are unaffected by it.
 */
export function registerAuthentication(
  app: FastifyInstance,
  tokens: TokenService,
  clients: ClientsService,
  sessions?: SessionAuthentication,
) {
  const unauthenticated = (request: FastifyRequest): ApiError => {
    const authorization = request.headers.authorization;
    if (typeof authorization === "string" && /^bearer\b/i.test(authorization)) {
      return invalidToken(
        "bearer_scheme",
        "The token was sent as Authorization: Bearer; this API reads it only from the x-api-key header.",
        tokens.audience,
      );
    }
    return invalidToken("missing", "The request has no x-api-key header.", tokens.audience);
  };

  /** Checks the client the token names, then the route's roles; sets the principal or throws. */
  const admit = (
    request: FastifyRequest,
    reply: FastifyReply,
    verified: VerifiedToken,
    found: ClientRecord | undefined,
    allowed: readonly ClientRole[] | undefined,
  ): void => {
    const client = clientOfToken(verified, found, tokens.audience);
    request.principal = {
      clientId: client.id,
      organizationId: client.organizationId,
      organizationName: client.organizationName,
      role: client.role,
      tokenExpiresAt: verified.expiresAt,
      ...(client.allOrganizations ? { allOrganizations: true as const } : {}),
    };
    // Every later log line of the request, "request completed" included, says which client made it.
    if (verboseLevels.has(request.log.level)) {
      request.log = request.log.child({ client_id: client.id });
      reply.log = request.log;
    }
    if (allowed && !allowed.includes(client.role)) {
      throw new ApiError("forbidden", {
        detail: `A client with role ${client.role} may not call ${request.method} ${request.routeOptions.url}.`,
        fix: `Use the credentials of a client with role ${allowed.join(" or ")}.`,
      });
    }
  };

  const lookUp = (
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
    verified: VerifiedToken,
    allowed: readonly ClientRole[] | undefined,
  ): void => {
    clients.findForAuthentication(verified.clientId).then((client) => {
      try {
        admit(request, reply, verified, client, allowed);
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    }, done);
  };

  app.addHook("onRequest", (request, reply, done) => {
    const config = request.routeOptions.config;
    const allowed = config?.auth;
    if (allowed === "public" || request.is404) {
      done();
      return;
    }
    const header = request.headers["x-api-key"];
    const roles = Array.isArray(allowed) ? allowed : undefined;
    if (typeof header !== "string" || header === "") {
      const sessionId = sessions?.sessionIdOf(request);
      if (sessions && sessionId !== undefined) {
        sessions.admit(request, sessionId, roles).then(() => done(), done);
        return;
      }
      done(unauthenticated(request));
      return;
    }
    const known = tokens.verifiedBefore(header);
    if (known) {
      lookUp(request, reply, done, known, roles);
      return;
    }
    tokens.verify(header).then((verified) => lookUp(request, reply, done, verified, roles), done);
  });
}
