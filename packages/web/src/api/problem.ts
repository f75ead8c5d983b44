import type { Problem } from "./types.ts";

/**
 * A refused call, carrying the API's problem body (RFC 9457 plus `code`, `reason`, `fix`): pages show its
 * `detail` and `fix` as they are, since the API writes them for people.
 */
export class ApiProblem extends Error {
  readonly status: number;
  readonly problem: Partial<Problem>;

  constructor(status: number, problem: Partial<Problem>) {
    super(problem.detail ?? `The server answered ${status}.`);
    this.name = "ApiProblem";
    this.status = status;
    this.problem = problem;
  }

  /** The session ended (expired, signed out elsewhere): the person must sign in again. */
  get signedOut(): boolean {
    return this.status === 401;
  }
}

/** The body of an openapi-fetch result, or its problem thrown: what TanStack Query's functions want. */
export function unwrap<Data>(result: { data?: Data; error?: unknown; response: Response }): Data {
  if (result.response.ok && result.data !== undefined) return result.data;
  const problem = typeof result.error === "object" && result.error !== null ? result.error : {};
  throw new ApiProblem(result.response.status, problem as Partial<Problem>);
}
