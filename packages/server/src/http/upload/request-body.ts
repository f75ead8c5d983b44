import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.ts";
import { lingerAfterAnswer } from "../lingering-close.ts";
import { type ExpectedDigest, parseContentDigest } from "./content-digest.ts";

/** What an upload's headers say of its body, read before any of it: see declaredBody. */
export interface DeclaredBody {
  /** Content-Length; undefined for a chunked body. */
  length: number | undefined;
  /** The Content-Digest the body must match; undefined when the client sent none. */
  digest: ExpectedDigest | undefined;
}

/**
 * The upload's Content-Length and Content-Digest, for an upload that checks both (a version's binary, a test
 * package). Throws invalid_request for a malformed one: call it where streamUpload answers refusals.
 */
export function declaredBody(request: FastifyRequest): DeclaredBody {
  const length = declaredLength(request.headers["content-length"]);
  const digestHeader = request.headers["content-digest"];
  const digest = parseContentDigest(Array.isArray(digestHeader) ? digestHeader.join(", ") : digestHeader);
  return { length, digest };
}

/** A Content-Length header as a number; undefined when absent (a chunked body). */
function declaredLength(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (!/^\d{1,15}$/.test(header)) {
    throw new ApiError("invalid_request", { detail: "The Content-Length header is not a whole number." });
  }
  return Number(header);
}

/**
 * For an upload refused from its headers, before its body was read: `Connection: close`, and once the answer
 * is out the connection lingers (half-closed, discarding at most 1 MiB for at most 2 s) so that a client still
 * sending the body reads the answer instead of a reset; draining the whole body (up to 500 MiB) would read it
 * for nothing. See lingerAfterAnswer.
 */
export function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("connection", "close");
  lingerAfterAnswer(request.raw, reply.raw, {
    onClosed: (outcome) =>
      request.log.info(
        {
          read_before_answer: outcome.readBeforeAnswer,
          discarded_bytes: outcome.discardedBytes,
          linger_end: outcome.reason,
          byte_bound_hit: outcome.byteBoundHit,
        },
        "refused upload's connection closed",
      ),
  });
}

/** The upload's body stream; a request with Content-Length: 0 reaches the handler without one (empty). */
export function uploadBody(request: FastifyRequest): Readable {
  return (request.body as Readable | undefined) ?? Readable.from([]);
}
