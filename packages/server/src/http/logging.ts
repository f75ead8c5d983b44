import { createRequire } from "node:module";
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import pino, { type DestinationStream, type Logger } from "pino";
import type { Config } from "../config.ts";

const require = createRequire(import.meta.url);

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
 * Where the server's lines go unless told otherwise: stdout through a buffer written asynchronously, so a
 * request never waits for a system call of its own (writing each line as it came, one `write` per line, cost
 * two thirds of the throughput of a trivial route at `info`). Lines are held until 32 KiB have gathered
 * (~120 request lines) or a second has passed, whichever comes first, so a quiet server's lines still show
 * within a second; each write takes up to 64 KiB (4 KiB and 16 KiB, pino's example and SonicBoom's default,
 * cost ~4 µs more CPU per request on the auth benchmark, in writes through the thread pool). What is
 * held is written out synchronously when the process exits (pino registers that for asynchronous
 * destinations), on a crash (`fatal` flushes; see main.ts) and on SIGTERM/SIGINT (`flushLogsSync`).
 */
export function bufferedStdout(): DestinationStream {
  return pino.destination({
    dest: 1,
    sync: false,
    minLength: 32 * 1024,
    maxWrite: 64 * 1024,
    periodicFlush: 1000,
    // If whatever reads stdout stops reading, lines beyond 16 MiB are dropped rather than held until the
    // server runs out of memory (a blocked write used to stall the server instead).
    maxLength: 16 * 1024 * 1024,
  });
}

/** The fields of a request's line (request-log.ts) that its readable form says in its message instead. */
const requestLineFields = ["method", "url", "status", "response_time_ms"] as const;

/**
 * Lines for a person at a terminal: time, level and message on one line, a request as `GET /v1/me 200 1.3 ms`,
 * other fields after it as compact JSON. Written synchronously: a terminal is read by a person, not a
 * throughput benchmark, and nothing is then held back when the process dies.
 */
export function prettyStdout(
  colorize: boolean,
  destination: number | NodeJS.WritableStream = 1,
): DestinationStream {
  // Loaded only when asked for: a server logging JSON (any server not on a terminal) does not pay its ~25 ms of
  // loading at every start. pino-pretty is CommonJS, so a synchronous require keeps this function synchronous.
  const pinoPretty = require("pino-pretty") as typeof import("pino-pretty");
  return pinoPretty({
    destination,
    sync: true,
    colorize,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: ["pid", "hostname", ...requestLineFields].join(","),
    messageFormat: (line, messageKey) => {
      const message = String(line[messageKey] ?? "");
      if (typeof line.method !== "string" || typeof line.url !== "string") return message;
      const outcome = `${line.method} ${line.url} ${String(line.status)} ${String(line.response_time_ms)} ms`;
      return message === "request completed" ? outcome : `${message}: ${outcome}`;
    },
  });
}

/**
 * Where the server's lines go: readable lines on a terminal (`TESTBAY_LOG_FORMAT=auto`, the default) or when
 * asked (`pretty`); otherwise one JSON object per line, for whatever collects them.
 */
export function stdoutDestination(
  format: Config["logFormat"],
  stdout: { isTTY?: boolean } = process.stdout,
): DestinationStream {
  const terminal = stdout.isTTY === true;
  if (format === "pretty" || (format === "auto" && terminal)) return prettyStdout(terminal);
  return bufferedStdout();
}

/** Writes out whatever the logger's destination holds, synchronously: for the moment before the process exits. */
export function flushLogsSync(logger: FastifyBaseLogger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[
    pino.symbols.streamSym
  ];
  try {
    stream?.flushSync?.();
  } catch {
    // Not open yet, or already closed: there is nothing left to write.
  }
}

/**
 * The server's logger. Request logs carry method, path, status and timing, never headers or bodies; the
 * redaction paths are a second guard in case a header or body is ever logged by mistake.
 */
export function createLogger(level: string, destination: DestinationStream): FastifyBaseLogger {
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

const levelMethods = new Set(["fatal", "error", "warn", "info", "debug", "trace"]);

type ChildOptions = Parameters<Logger["child"]>[1];
type Bindings = Parameters<Logger["child"]>[0];

/**
 * Fastify makes a child logger for every request, bound to its request_id, and always passes an options
 * object, empty unless the route sets a log level or serializers; pino takes its slow path for any options
 * object. Two savings, with the same lines written:
 * - empty options are dropped, so pino takes its fast path;
 * - the child is made only when something is logged through it or it is asked for more than its level.
 *   A request's own line is written by the log controller (request-log.ts) without it, so most requests,
 *   at every level, never pay for one; nor for the grandchild authentication binds the client_id to.
 * Children of children inherit this (pino children are made with the parent as prototype).
 */
function cheapenChildren(logger: Logger): void {
  const makeChild = logger.child;
  logger.child = function child(this: Logger, bindings, options?: ChildOptions) {
    const given = options && Object.keys(options).length > 0 ? options : undefined;
    if (given) return makeChild.call(this, bindings, given);
    return deferred(new DeferredChild(this, bindings, makeChild));
  } as Logger["child"];
}

/** What is used of a logger here, whether root or child (pino types a child apart from its parent). */
type AnyLogger = Pick<Logger, "level" | "isLevelEnabled" | "child">;

class DeferredChild {
  child: AnyLogger | undefined;
  constructor(
    /** The logger this is a child of: a real one, or another child not made yet. */
    readonly parent: AnyLogger | DeferredChild,
    readonly bindings: Bindings,
    readonly makeChild: Logger["child"],
  ) {}
}

function deferred(state: DeferredChild): Logger {
  return new Proxy(state, deferredChild) as unknown as Logger;
}

/** The nearest real logger up the chain: its level is every deferred child's level. */
function realAncestor(state: DeferredChild): AnyLogger {
  let parent = state.parent;
  while (parent instanceof DeferredChild) parent = parent.child ?? parent.parent;
  return parent;
}

function made(state: DeferredChild): AnyLogger {
  let child = state.child;
  if (!child) {
    const parent = state.parent instanceof DeferredChild ? made(state.parent) : state.parent;
    child = state.makeChild.call(parent as Logger, state.bindings);
    state.child = child;
  }
  return child;
}

function noop(): void {}

/**
 * A child logger not made yet: reads its level from its parent, log calls below that level cost nothing,
 * and its own children (without options) are deferred in turn.
 */
const deferredChild: ProxyHandler<DeferredChild> = {
  get(state, property) {
    if (!state.child) {
      const parent = realAncestor(state);
      if (property === "level") return parent.level;
      if (property === "child") {
        return (bindings: Bindings, options?: ChildOptions) =>
          options && Object.keys(options).length > 0
            ? made(state).child(bindings, options)
            : deferred(new DeferredChild(state, bindings, state.makeChild));
      }
      if (typeof property === "string" && levelMethods.has(property) && !parent.isLevelEnabled(property)) {
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
