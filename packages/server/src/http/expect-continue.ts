import type { FastifyInstance } from "fastify";

/**
 * Takes over `Expect: 100-continue` from Node, which would otherwise send 100 Continue for every request
 * before the server knows whether it wants the body. A route may then refuse an upload (404, 409, 413)
 * before the client sends a byte of it. Routes that do not decide for themselves (`deferContinue`) send it
 * once the request has passed authentication and rate limiting, just before their body is read.
 */
export function registerExpectContinue(app: FastifyInstance): void {
  app.server.on("checkContinue", (request, response) => app.server.emit("request", request, response));
  app.addHook("preParsing", (request, reply, payload, done) => {
    const expect = request.headers.expect;
    if (expect && !request.routeOptions.config?.deferContinue && /100-continue/i.test(expect)) {
      reply.raw.writeContinue();
    }
    done(null, payload);
  });
}
