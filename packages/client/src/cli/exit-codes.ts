import { TestbayApiError, TestbayGaveUpError, TestbayNetworkError } from "../sdk/errors.ts";

/** The CLI's exit codes (CLIENT.md): pipelines branch on them, so they never change meaning. */
export const ExitCode = {
  /** Everything triggered (and, with --wait, passed). */
  ok: 0,
  /** A test failed, or an execution errored or was cancelled. */
  testsFailed: 1,
  /** Usage or configuration error. */
  usage: 2,
  /** Some plans failed to start (`failed_executions` non-empty). */
  plansFailedToStart: 3,
  /** The API refused the request (a non-retryable 4xx or 500). */
  refused: 4,
  /** Gave up: retries or --timeout exhausted. */
  gaveUp: 5,
  /** Interrupted (Ctrl-C) while waiting: the executions go on. 128 + SIGINT, as shells report it. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A mistake in how the CLI was called or configured: nothing was sent. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The exit code an error ends a command with. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return ExitCode.usage;
  if (error instanceof TestbayApiError) {
    return error.failedExecutions.length > 0 ? ExitCode.plansFailedToStart : ExitCode.refused;
  }
  if (error instanceof TestbayGaveUpError || error instanceof TestbayNetworkError) return ExitCode.gaveUp;
  return ExitCode.testsFailed;
}
