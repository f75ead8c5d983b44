import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "../errors.ts";

/** No byte of a request body arrived for the idle timeout: it was cut off there and nothing was kept. */
export class BodyIdleTimeoutError extends Error {
  override name = "BodyIdleTimeoutError";
  /** Fastify's body reader keeps a status ≥ 400 that an error brings, and makes any other a 400. */
  readonly statusCode = 408;
  constructor(readonly idleMs: number) {
    super(`no byte of the body arrived for ${idleMs / 1000} s`);
  }
}

/** The answer to a stalled body: 408, on a connection that is then closed (the rest will not be read). */
export function bodyIdleTimeoutProblem(error: BodyIdleTimeoutError, what = "request"): ApiError {
  const seconds = error.idleMs / 1000;
  return new ApiError("request_timeout", {
    detail: `No byte of the body arrived for ${seconds} s, so the ${what} was cut off there; nothing was kept.`,
    fix: `Send the body without pauses of ${seconds} s or more (check the network and any proxy in between), then send the ${what} again.`,
    headers: { connection: "close" },
  });
}

const guards = new WeakMap<FastifyRequest, () => void>();

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined;
}

/**
 * Cuts off request bodies that Fastify reads itself (JSON, forms) when no byte arrives for `idleMs`: a
 * client trickling a body, or hung halfway, would otherwise hold its connection for ever (Fastify sets no
 * request timeout). The socket's own inactivity timer does the watching, so a healthy request costs nothing
 * per chunk. Once the body is read (preValidation) the guard is lifted: streamed bodies (uploads, artifacts)
 * are then watched by receiveBody, which can still answer on the connection.
 *
 * On a stall the body stream fails with BodyIdleTimeoutError, which the error handler answers with
 * `408 request_timeout` and `Connection: close`; with nothing reading the body, the connection is closed.
 */
export function registerBodyIdleTimeout(app: FastifyInstance, idleMs: number): void {
  app.addHook("onRequest", (request, _reply, done) => {
    if (!hasBody(request)) return done();
    const body = request.raw;
    const onIdle = () => {
      lift(request);
      const error = new BodyIdleTimeoutError(idleMs);
      // Fastify's body reader listens for errors and hands them to the error handler, which can answer;
      // without a reader there is no one to answer, and the connection goes.
      if (body.listenerCount("error") > 0) body.emit("error", error);
      else body.destroy(error);
    };
    // Node emits "timeout" on a request whose body is incomplete when its socket has been idle this long.
    body.setTimeout(idleMs, onIdle);
    guards.set(request, onIdle);
    done();
  });
  app.addHook("preValidation", (request, _reply, done) => {
    lift(request);
    done();
  });
  // A request answered before its body was read (a 404, a refusal) keeps its guard: once the answer is out,
  // Node gives the socket its keep-alive timeout instead, and a guard that fires after that only closes a
  // connection that timeout would close. No hook on every response for it.
}

function lift(request: FastifyRequest): void {
  const onIdle = guards.get(request);
  if (!onIdle) return;
  guards.delete(request);
  request.raw.off("timeout", onIdle);
  request.raw.socket?.setTimeout(0);
}
