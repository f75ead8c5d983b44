import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.ts";
import type { ClientsService } from "../clients/index.ts";
import { invalidToken, type TokenService } from "./tokens.ts";

/** Levels at which request logs are written; below them a child logger per request is wasted work. */
const verboseLevels = new Set(["info", "debug", "trace"]);

/**
 * Authenticates every request to a non-public route from its `x-api-key` header, then checks the route's
 * roles. A valid token is not enough: its client must still exist and be enabled.
 */
export function registerAuthentication(app: FastifyInstance, tokens: TokenService, clients: ClientsService) {
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    const allowed = request.routeOptions.config?.auth;
    if (allowed === "public" || request.is404) return;

    const header = request.headers["x-api-key"];
    if (typeof header !== "string" || header === "") {
      const authorization = request.headers.authorization;
      if (typeof authorization === "string" && /^bearer\b/i.test(authorization)) {
        throw invalidToken(
          "bearer_scheme",
          "The token was sent as Authorization: Bearer; this API reads it only from the x-api-key header.",
          tokens.audience,
        );
      }
      throw invalidToken("missing", "The request has no x-api-key header.", tokens.audience);
    }

    const verified = await tokens.verify(header);
    const client = await clients.findForAuthentication(verified.clientId);
    if (!client || client.organizationId !== verified.organizationId || client.disabledAt) {
      throw invalidToken(
        "client_disabled",
        "The client this token was issued to is disabled.",
        tokens.audience,
      );
    }
    request.principal = {
      clientId: client.id,
      organizationId: client.organizationId,
      organizationName: client.organizationName,
      role: client.role,
      tokenExpiresAt: verified.expiresAt,
    };
    // Every later log line of the request, "request completed" included, says which client made it.
    if (verboseLevels.has(request.log.level)) {
      request.log = request.log.child({ client_id: client.id });
      reply.log = request.log;
    }

    if (Array.isArray(allowed) && !allowed.includes(client.role)) {
      throw new ApiError("forbidden", {
        detail: `A client with role ${client.role} may not call ${request.method} ${request.routeOptions.url}.`,
        fix: `Use the credentials of a client with role ${allowed.join(" or ")}.`,
      });
    }
  });
}
