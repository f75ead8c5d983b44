import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../../errors.ts";

/** A Content-Length header as a number; undefined when absent (a chunked body). */
export function declaredLength(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  if (!/^\d{1,15}$/.test(header)) {
    throw new ApiError("invalid_request", { detail: "The Content-Length header is not a whole number." });
  }
  return Number(header);
}

/**
 * For an upload refused from its headers: the body was not read and will not be, so the connection is closed
 * rather than drained (up to 500 MiB). Node would read on until its deferred close; closing as soon as the
 * answer is out keeps that to what is already buffered.
 */
export function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("connection", "close");
  reply.raw.once("finish", () => request.raw.socket?.destroy());
}

/** The upload's body stream; a request with Content-Length: 0 reaches the handler without one (empty). */
export function uploadBody(request: FastifyRequest): Readable {
  return (request.body as Readable | undefined) ?? Readable.from([]);
}
