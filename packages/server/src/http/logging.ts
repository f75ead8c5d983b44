import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import pino, { type DestinationStream, type Logger } from "pino";

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
  const logger = pino(
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
  cheapenChildren(logger);
  return logger;
}

/** Levels at which every request writes lines ("incoming request", "request completed"). */
const requestLineLevels = new Set(["info", "debug", "trace"]);
const levelMethods = new Set(["fatal", "error", "warn", "info", "debug", "trace"]);

type ChildOptions = Parameters<Logger["child"]>[1];

/**
 * Fastify makes a child logger for every request, bound to its request_id, and always passes an options
 * object, empty unless the route sets a log level or serializers; pino takes its slow path for any options
 * object. Two savings, with the same lines written:
 * - empty options are dropped, so pino takes its fast path;
 * - at levels where a request writes no line unless something goes wrong (warn and above: `info` calls are
 *   no-ops there), the child is made only when something is logged through it or it is asked for more than
 *   its level. Most requests then never pay for one.
 * Children of children inherit this (pino children are made with the parent as prototype).
 */
function cheapenChildren(logger: Logger): void {
  const makeChild = logger.child;
  logger.child = function child(this: Logger, bindings, options?: ChildOptions) {
    const given = options && Object.keys(options).length > 0 ? options : undefined;
    if (given || requestLineLevels.has(this.level)) return makeChild.call(this, bindings, given);
    const state: DeferredChild = { parent: this, bindings, makeChild, child: undefined };
    return new Proxy(state, deferredChild) as unknown as Logger;
  } as Logger["child"];
}

interface DeferredChild {
  parent: Logger;
  bindings: Parameters<Logger["child"]>[0];
  makeChild: Logger["child"];
  child: ChildLogger | undefined;
}

type ChildLogger = ReturnType<Logger["child"]>;

function made(state: DeferredChild): ChildLogger {
  let child = state.child;
  if (!child) {
    child = state.makeChild.call(state.parent, state.bindings);
    state.child = child;
  }
  return child;
}

function noop(): void {}

/** A child logger not made yet: reads its level from the parent, and log calls below it cost nothing. */
const deferredChild: ProxyHandler<DeferredChild> = {
  get(state, property) {
    if (!state.child) {
      if (property === "level") return state.parent.level;
      if (
        typeof property === "string" &&
        levelMethods.has(property) &&
        !state.parent.isLevelEnabled(property)
      ) {
        return noop;
      }
    }
    const child = made(state);
    const value: unknown = Reflect.get(child, property, child);
    return typeof value === "function" ? value.bind(child) : value;
  },
  set(state, property, value) {
    const child = made(state);
    return Reflect.set(child, property, value, child);
  },
  has(state, property) {
    return Reflect.has(made(state), property);
  },
  getPrototypeOf(state) {
    return Reflect.getPrototypeOf(made(state));
  },
};
