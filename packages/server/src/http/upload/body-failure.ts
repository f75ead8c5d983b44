import type { FastifyReply, FastifyRequest } from "fastify";
import { bodyIdleTimeoutProblem } from "../body-idle-timeout.ts";
import { BodyAbortedError, BodyIdleTimeoutError } from "./receive-body.ts";

/**
 * What a route that streams a body (an upload, an artifact) does when the body fails before its end; the
 * staging file is gone by then (receiveBody). Neither is the server's fault, so neither is logged as an error:
 * - the client went away (BodyAbortedError): there is no one to answer; returns the reply to end the handler;
 * - the body stalled (BodyIdleTimeoutError): throws 408 request_timeout, and the connection is closed once
 *   that is sent, since the rest of the body will not be read.
 * Returns undefined for any other error, which the caller rethrows.
 *
 * @example
 * catch (error) { const settled = settleBodyFailure(request, reply, error, "upload"); if (settled) return settled; throw error; }
 */
export function settleBodyFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  what: string,
): FastifyReply | undefined {
  if (error instanceof BodyAbortedError) {
    request.log.info(`${what} abandoned by the client; nothing was kept`);
    return reply;
  }
  if (!(error instanceof BodyIdleTimeoutError)) return undefined;
  const seconds = error.idleMs / 1000;
  request.log.info({ idle_seconds: seconds }, `${what} stalled; cut off, nothing was kept`);
  reply.raw.once("finish", () => request.raw.socket?.destroy());
  throw bodyIdleTimeoutProblem(error, what);
}
