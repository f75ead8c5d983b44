import type { components } from "./api.generated.ts";

/** Every error `code` the API answers with: the server's error catalog, from the OpenAPI document. */
export type ErrorCode = components["schemas"]["ErrorCode"];

/** A plan that a batch trigger could not start, as the server lists it in `failed_executions`. */
export type FailedExecution = components["schemas"]["FailedExecution"];

/**
 * An RFC 9457 problem document as the Testbay API sends it (components["schemas"]["Problem"]), read
 * defensively: an error may come from a proxy in between, so every member may be missing. Unknown members
 * are kept.
 */
export type Problem = Partial<components["schemas"]["Problem"]> & {
  failed_executions?: FailedExecution[];
  [member: string]: unknown;
};

/** What `TestbayApiError.code` holds when the answer was no problem document: `http_<status>`. */
export type HttpStatusCode = `http_${number}`;

/** What a 404 means, said wherever one is reported: the service answered, so it is not down (rule 7). */
export const notFoundHint =
  "A 404 means a wrong ID or package name, or a version that is not registered yet; the service itself is up.";

/**
 * The API refused a request: it carries the server's `code`, `reason`, `detail` and `fix` (rule 8), and the
 * raw problem document. Thrown for every non-2xx answer the SDK does not retry, or stops retrying.
 */
export class TestbayApiError extends Error {
  override readonly name = "TestbayApiError";
  readonly status: number;
  /** The server's error code; `http_<status>` when the answer carried none (a proxy's error page). */
  readonly code: ErrorCode | HttpStatusCode;
  readonly reason: string | undefined;
  readonly detail: string;
  readonly fix: string | undefined;
  readonly retryable: boolean;
  readonly request_id: string | undefined;
  /** For a batch trigger that started no plan: why each one did not start. */
  readonly failedExecutions: FailedExecution[];
  readonly problem: Problem;
  readonly method: string;
  readonly path: string;

  constructor(init: { status: number; problem: Problem; method: string; path: string }) {
    const { status, problem } = init;
    const code: ErrorCode | HttpStatusCode =
      typeof problem.code === "string" ? problem.code : `http_${status}`;
    const detail =
      typeof problem.detail === "string"
        ? problem.detail
        : `${init.method} ${init.path} answered ${status}${problem.title ? ` (${problem.title})` : ""}.`;
    super(`${code}: ${detail}`);
    this.status = status;
    this.code = code;
    this.reason = typeof problem.reason === "string" ? problem.reason : undefined;
    this.detail = detail;
    this.fix = typeof problem.fix === "string" ? problem.fix : undefined;
    this.retryable = problem.retryable === true;
    this.request_id = typeof problem.request_id === "string" ? problem.request_id : undefined;
    this.failedExecutions = Array.isArray(problem.failed_executions) ? problem.failed_executions : [];
    this.problem = problem;
    this.method = init.method;
    this.path = init.path;
  }

  /** A 404: a wrong ID or an unregistered version, never an outage. */
  get isNotFound(): boolean {
    return this.status === 404;
  }
}

/** The request could not be completed: the network failed and the request was not safe to send again. */
export class TestbayNetworkError extends Error {
  override readonly name = "TestbayNetworkError";
  constructor(
    readonly method: string,
    readonly path: string,
    override readonly cause: unknown,
  ) {
    super(`${method} ${path} failed: ${describeCause(cause)}`);
  }
}

/**
 * The SDK gave up: every attempt met a retryable failure (429, 502, 503, 504 or a network error) and the
 * attempts or the deadline ran out. `lastError` is what the last attempt met.
 */
export class TestbayGaveUpError extends Error {
  override readonly name = "TestbayGaveUpError";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly attempts: number,
    readonly why: "attempts" | "deadline",
    readonly lastError: Error,
  ) {
    super(
      `Gave up on ${method} ${path} after ${attempts} attempt${attempts === 1 ? "" : "s"} (${
        why === "attempts" ? "no attempts left" : "deadline reached"
      }); the last one: ${lastError.message}`,
    );
  }
}

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as { cause?: unknown }).cause;
    const code = (inner as { code?: unknown } | undefined)?.code ?? (cause as { code?: unknown }).code;
    const innerMessage = inner instanceof Error ? inner.message : undefined;
    return [cause.message, innerMessage, typeof code === "string" ? `(${code})` : undefined]
      .filter(Boolean)
      .join(": ");
  }
  return String(cause);
}
