import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import pino, { type DestinationStream } from "pino";

const sensitiveName = /secret|token|key|password|signature/i;

/** The path and query of a URL with the values of sensitive-looking query parameters blanked. */
export function redactUrl(url: string): string {
  const question = url.indexOf("?");
  if (question < 0) return url;
  const params = new URLSearchParams(url.slice(question + 1));
  for (const name of [...params.keys()]) if (sensitiveName.test(name)) params.set(name, "[REDACTED]");
  return `${url.slice(0, question)}?${params.toString()}`;
}

/**
 * The server's logger. Request logs carry method, path, status and timing, never headers or bodies; the
 * redaction paths are a second guard in case a header or body is ever logged by mistake.
 */
export function createLogger(level: string, destination?: DestinationStream): FastifyBaseLogger {
  return pino(
    {
      level,
      redact: {
        paths: [
          "req.headers.authorization",
          'req.headers["x-api-key"]',
          "req.headers.cookie",
          "*.client_secret",
          "*.access_token",
          "*.secret",
          "*.token",
          "*.password",
        ],
        censor: "[REDACTED]",
      },
      serializers: {
        req: (request: FastifyRequest) => ({
          method: request.method,
          url: redactUrl(request.url),
          remoteAddress: request.ip,
        }),
        res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
      },
    },
    destination,
  );
}
