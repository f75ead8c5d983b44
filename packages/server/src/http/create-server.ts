import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyBaseLogger } from "fastify";
import type { Config } from "../config.ts";
import { ApiError } from "../errors.ts";
import { registerBodyIdleTimeout } from "./body-idle-timeout.ts";
import { answerClientError } from "./client-errors.ts";
import { buildCachedSerializer } from "./compiled-schemas.ts";
import { registerErrorHandling, sendProblem } from "./error-handler.ts";
import { registerUnstorableTextCheck } from "./refuse-unstorable-text.ts";
import { requestIdFor } from "./request-id.ts";
import { RequestLogController } from "./request-log.ts";
import { registerValidation } from "./validation.ts";

/** JSON bodies are small (plans, triggers); binaries have their own streaming endpoint. */
const jsonBodyLimit = 1024 * 1024;

/**
 * The Fastify instance with the server's HTTP settings and the hooks every request goes through whatever
 * feature answers it (request IDs, validation, errors as problem documents, stalled bodies). Features add
 * their hooks and routes to it (app.ts).
 */
export function createHttpServer(config: Config, logger: FastifyBaseLogger) {
  const app = Fastify({
    loggerInstance: logger,
    // request.ip and request.protocol come from X-Forwarded-For/-Proto only behind the proxies named in
    // TESTBAY_TRUSTED_PROXIES (docs/api-behaviour.md): anyone else could write those headers.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    genReqId: requestIdFor,
    // One line per request, written when it is answered (http/request-log.ts).
    logController: new RequestLogController(logger),
    bodyLimit: jsonBodyLimit,
    // Closing with requests in flight waits for them; idle keep-alive sockets are closed at once.
    forceCloseConnections: "idle",
    return503OnClosing: true,
    clientErrorHandler: answerClientError,
    // Response serializers compiled once per process, whatever number of servers it builds (compiled-schemas.ts).
    schemaController: { compilersFactory: { buildSerializer: buildCachedSerializer } },
    // Malformed percent-encoding in a path: answered like every other bad request.
    frameworkErrors: (_error, request, reply) =>
      sendProblem(
        request,
        reply,
        new ApiError("invalid_request", {
          detail: "The URL is not valid: it has malformed percent-encoding.",
          fix: "Percent-encode the path correctly (for example %2F for '/', %25 for '%').",
        }),
      ),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Fastify parses text/plain by default; this API takes JSON (and forms on the token endpoint) only.
  app.removeContentTypeParser("text/plain");
  // Callback-style where there is nothing to await: these run on every request, and a promise per hook adds up.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    reply.header("x-content-type-options", "nosniff");
    done();
  });
  registerValidation(app);
  registerUnstorableTextCheck(app);
  registerErrorHandling(app, config.supportEmail);
  registerBodyIdleTimeout(app, config.bodyIdleTimeoutSeconds * 1000);
  return app;
}
