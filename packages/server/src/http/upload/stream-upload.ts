import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.ts";
import { settleBodyFailure } from "./body-failure.ts";
import { closeAfterAnswer, uploadBody } from "./request-body.ts";

/** One upload route's own part: what it checks before the body, and what it does with the body. */
export interface StreamedUpload<Accepted> {
  /** The upload's name in logs and in a 408's detail and fix: "upload", "test package upload", "artifact upload". */
  what: string;
  /**
   * Everything the upload can be refused for before a byte of its body is read (its headers, its path, what
   * is stored already). What it throws is answered at once, on a connection closed after lingering.
   */
  beforeBody(): Promise<Accepted> | Accepted;
  /** Reads the body (receiveBody, receiveVerified) and answers. */
  receive(accepted: Accepted, body: Readable): Promise<FastifyReply>;
}

/**
 * The handler of every route whose body is a file, streamed (a version's binary, its test package, an agent's
 * artifact), in the order they all keep:
 * 1. refusals from the headers, before the body (beforeBody): `Connection: close`, and the connection lingers
 *    so that a client still sending reads the answer (closeAfterAnswer);
 * 2. 100 Continue, for a route that holds it back until then (`deferContinue`, http/expect-continue.ts);
 * 3. the body (receive); a client that went away or stalled is settled without an error log
 *    (settleBodyFailure), and a body cut off at the size limit closes the connection, its rest unread.
 *
 * @example
 * async (request, reply) => streamUpload(request, reply, { what: "upload", beforeBody: …, receive: … })
 */
export async function streamUpload<Accepted>(
  request: FastifyRequest,
  reply: FastifyReply,
  upload: StreamedUpload<Accepted>,
): Promise<FastifyReply> {
  let accepted: Accepted;
  try {
    accepted = await upload.beforeBody();
  } catch (error) {
    closeAfterAnswer(request, reply);
    throw error;
  }
  // A route without deferContinue had its 100 Continue sent once it was authenticated (expect-continue.ts).
  if (request.routeOptions.config.deferContinue && /100-continue/i.test(request.headers.expect ?? "")) {
    reply.raw.writeContinue();
  }
  try {
    return await upload.receive(accepted, uploadBody(request));
  } catch (error) {
    const settled = settleBodyFailure(request, reply, error, upload.what);
    if (settled) return settled;
    if (error instanceof ApiError && error.code === "file_size_exceeded") reply.header("connection", "close");
    throw error;
  }
}

/**
 * Makes the bodies of an upload plugin's routes reach their handler unread, as a stream, whatever their
 * content type: the handler may then refuse an upload before reading a byte of it (streamUpload).
 */
export function acceptStreamedBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
}
