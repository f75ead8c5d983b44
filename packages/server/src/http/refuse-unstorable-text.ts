import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "../errors.ts";
import { findUnstorableText } from "./storable-text.ts";

type RequestPart = "params" | "querystring" | "body";

/** The first part of the request, and the pointer in it, that holds text no database can store. */
function unstorablePart(request: FastifyRequest): { part: RequestPart; path: string } | undefined {
  const params = findUnstorableText(request.params);
  if (params !== undefined) return { part: "params", path: params };
  const query = findUnstorableText(request.query);
  if (query !== undefined) return { part: "querystring", path: query };
  if (request.routeOptions.config?.deviceText) return undefined;
  const body = findUnstorableText(request.body);
  if (body !== undefined) return { part: "body", path: body };
  return undefined;
}

/**
 * Refuses U+0000 and unpaired surrogates in what clients send (path, query, JSON and form bodies) with
 * 400 invalid_request, on every route and both databases, before any handler can pass them to a query
 * (PostgreSQL would answer with an error, and the client with a 500).
 */
export function registerUnstorableTextCheck(app: FastifyInstance): void {
  app.addHook("preValidation", (request, _reply, done) => {
    const found = unstorablePart(request);
    if (!found) return done();
    done(
      new ApiError("invalid_request", {
        detail: `The request's ${found.part} holds a NUL character (U+0000) or an unpaired UTF-16 surrogate at ${found.path}.`,
        fix: "Remove NUL characters and send text as well-formed UTF-8 (names, identifiers and filters cannot hold control character U+0000).",
        extra: {
          errors: [{ path: found.path, in: found.part, message: "holds text that cannot be stored" }],
        },
      }),
    );
  });
}
