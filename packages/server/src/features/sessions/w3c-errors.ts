/**
 * The W3C WebDriver errors Testbay answers on `/wd/hub` with. WebDriver clients (WebdriverIO, the Appium Java and
 * Python clients) read only W3C error bodies, `{value: {error, message, stacktrace}}`, and turn `error` into their
 * own exception types, so these answers never use the problem documents of the `/v1` API (src/errors.ts).
 *
 * Each code's HTTP status is the one of the W3C WebDriver specification's error table
 * (https://w3c.github.io/webdriver/#errors): clients check the code, some the status too.
 * Errors Appium itself returns are relayed as they are; these are the ones Testbay produces.
 */
export const w3cErrorStatus = {
  /** The body of a command (here: the new session's capabilities) is malformed or breaks a rule. */
  "invalid argument": 400,
  /** No session with this ID, or one that has ended (its message says why: deleted, idle, lost device…). */
  "invalid session id": 404,
  /** No command at this path. */
  "unknown command": 404,
  /** A known path with a method it does not take. */
  "unknown method": 405,
  /** Capabilities that are well formed but that Testbay cannot serve: no such platform, queue timeout… */
  "session not created": 500,
  /** An operation did not finish in time. */
  timeout: 500,
  /** Anything else that went wrong on Testbay's side. */
  "unknown error": 500,
  /** A command Testbay understands but does not offer. */
  "unsupported operation": 500,
} as const;

export type W3cErrorCode = keyof typeof w3cErrorStatus;

export interface W3cErrorBody {
  value: { error: W3cErrorCode; message: string; stacktrace: string };
}

/** What to send: the status and the body. */
export interface W3cErrorAnswer {
  status: number;
  body: W3cErrorBody;
}

/**
 * The answer for an error. `stacktrace` is always empty: Testbay's own stack means nothing to the team's tests
 * and would show the server's internals to every client.
 */
export function w3cErrorAnswer(error: W3cErrorCode, message: string): W3cErrorAnswer {
  return { status: w3cErrorStatus[error], body: { value: { error, message, stacktrace: "" } } };
}

/**
 * For the refusals the W3C table has no status for, which HTTP says better: 401 (no or wrong credentials),
 * 403 (a role that may not open sessions), 429 (the rate limit, with Retry-After). The body stays a W3C one.
 */
export interface WebDriverErrorOptions {
  status?: 401 | 403 | 429;
  headers?: Record<string, string>;
}

/** Thrown by the session modules; the `/wd/hub` routes turn it into its answer. */
export class WebDriverError extends Error {
  readonly error: W3cErrorCode;
  readonly headers: Record<string, string>;
  private readonly statusOverride: number | undefined;

  constructor(error: W3cErrorCode, message: string, options: WebDriverErrorOptions = {}) {
    super(message);
    this.name = "WebDriverError";
    this.error = error;
    this.statusOverride = options.status;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return this.statusOverride ?? w3cErrorStatus[this.error];
  }

  answer(): W3cErrorAnswer {
    return { ...w3cErrorAnswer(this.error, this.message), status: this.status };
  }
}
