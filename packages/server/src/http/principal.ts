import type { FastifyRequest } from "fastify";
import type { Principal } from "./fastify-types.ts";

/** The authenticated caller of a non-public route; the authentication hook guarantees there is one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`${request.routeOptions.url} was reached without authentication`);
  return request.principal;
}
