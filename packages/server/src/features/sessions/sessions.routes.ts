import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { NewSessions } from "./new-session.ts";
import { WebDriverError, w3cErrorAnswer } from "./w3c-errors.ts";
import { asWebDriverError, type WebDriverAuthentication } from "./webdriver-authentication.ts";

export interface SessionsRoutesOptions {
  authentication: WebDriverAuthentication;
  newSessions: NewSessions;
  /** TESTBAY_PUBLIC_URL (ends in /v1): where people open the dashboard; else the request's own origin. */
  publicUrl: string | undefined;
}

/**
 * `POST /wd/hub/session` and `GET /wd/hub/status` (API.md §12). Outside /v1 and out of the OpenAPI document:
 * WebDriver's own protocol, whose every error is a W3C body (`{value: {error, message, stacktrace}}`), never a
 * problem document, because WebDriver clients read only those. So the routes authenticate and count themselves
 * (`auth: "public"`, `rateLimit: "route"`) and answer their own errors, those of Fastify's body parsing included.
 */
export const sessionsRoutes: FastifyPluginAsync<SessionsRoutesOptions> = async (app, options) => {
  const { authentication, newSessions, publicUrl } = options;

  app.post(
    "/wd/hub/session",
    {
      config: { auth: "public", rateLimit: "route" },
      schema: { hide: true },
      errorHandler: (error, request, reply) => sendW3cError(request, reply, fromFastify(error)),
    },
    async (request, reply) => {
      try {
        const caller = await authentication.admit(request, reply);
        const gone = new AbortController();
        // The response closing before it was sent: the client hung up while its session waited.
        reply.raw.once("close", () => {
          if (!reply.sent) gone.abort();
        });
        const origin = publicUrl ? publicUrl.replace(/\/v1$/, "") : `${request.protocol}://${request.host}`;
        const answer = await newSessions.create(caller, request.body, origin, gone.signal);
        return reply.code(200).send(answer);
      } catch (error) {
        return sendW3cError(request, reply, asWebDriverError(error));
      }
    },
  );

  app.get("/wd/hub/status", { config: { auth: "public" }, schema: { hide: true } }, async () => ({
    value: {
      ready: true,
      message: "Testbay takes new sessions; each waits for a matching free device up to its queue timeout",
    },
  }));
};

/** Errors Fastify raises before the handler (a body that is not JSON, too large, of another type). */
function fromFastify(error: FastifyError): unknown {
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return new WebDriverError("invalid argument", `the request could not be read: ${error.message}`);
  }
  return error;
}

function sendW3cError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof WebDriverError) {
    const { status, body } = error.answer();
    return reply.code(status).headers(error.headers).type("application/json; charset=utf-8").send(body);
  }
  // No internals in the answer: they are in the log, under the request's ID.
  request.log.error({ err: error }, "new WebDriver session failed");
  const { status, body } = w3cErrorAnswer(
    "unknown error",
    `Testbay could not create the session (request ${request.id}); ask the server's administrator`,
  );
  return reply.code(status).type("application/json; charset=utf-8").send(body);
}
