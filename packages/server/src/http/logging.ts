import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import pino, { type DestinationStream } from "pino";

const sensitiveName = /secret|token|key|password|signature/i;

/** The path and query of a URL with the values of sensitive-looking query parameters blanked. */
export function redactUrl(url: string): string {
  const question = url.indexOf("?");
  if (question < 0) return url;
  const query = url
    .slice(question + 1)
    .split("&")
    .map((pair) => {
      const name = pair.split("=", 1)[0] ?? "";
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // a malformed name is judged as written
      }
      return sensitiveName.test(decoded) ? `${name}=[REDACTED]` : pair;
    });
  return `${url.slice(0, question)}?${query.join("&")}`;
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
