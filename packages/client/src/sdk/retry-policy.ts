import { type Clock, type Random, untilAborted } from "./clock.ts";
import { TestbayGaveUpError } from "./errors.ts";

/**
 * When and how long to retry (CLIENT.md rules 2 and 3): only 429, 502, 503 and 504, plus network errors on
 * requests that are safe to send twice; exponential backoff with full jitter, a Retry-After as the least
 * wait, at most `maxAttempts` attempts, all within one deadline.
 */
export interface RetryOptions {
  /** First backoff ceiling: attempt n (0-based) waits random(0, min(cap, base · 2^n)). */
  baseMs: number;
  capMs: number;
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Budget for one call, retries and waits included, from its first attempt. */
  deadlineMs: number;
}

export const defaultRetryOptions: RetryOptions = {
  baseMs: 500,
  capMs: 30_000,
  maxAttempts: 6,
  deadlineMs: 5 * 60_000,
};

/** Transient answers: rate limited, or a gateway or server that is briefly not there. */
const retryableStatuses = new Set([429, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return retryableStatuses.has(status);
}

/** Methods that mean the same when sent twice (RFC 9110 §9.2.2). */
const idempotentMethods = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

/**
 * A network error leaves it unknown whether the server acted; sending again is safe only when acting twice
 * is the same as once: an idempotent method, or a request whose Idempotency-Key makes the server replay.
 */
export function mayRetryNetworkError(method: string, hasIdempotencyKey: boolean): boolean {
  return hasIdempotencyKey || idempotentMethods.has(method.toUpperCase());
}

/** `Retry-After` as milliseconds to wait: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Full jitter: random(0, min(cap, base · 2^attempt)) for the wait after failed attempt `attempt` (0-based). */
export function backoffMs(attempt: number, random: Random, options: Pick<RetryOptions, "baseMs" | "capMs">) {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/** What one attempt came to: a result, or a retryable failure (with the server's Retry-After, if any). */
export type AttemptOutcome<T> = { done: T } | { retry: Error; retryAfterMs?: number | undefined };

export interface RetryEvent {
  method: string;
  path: string;
  /** The call is retried until its deadline, with no attempt limit (CLIENT.md rule 13: waiting on executions). */
  untilDeadline: boolean;
  /** The attempt that failed, 0-based. */
  attempt: number;
  delayMs: number;
  error: Error;
}

export class RetryPolicy {
  readonly options: RetryOptions;

  constructor(
    options: Partial<RetryOptions>,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly onRetry?: (event: RetryEvent) => void,
  ) {
    this.options = { ...defaultRetryOptions, ...options };
  }

  /** The wait after failed attempt `attempt`: the jittered backoff, but never less than Retry-After. */
  delayFor(attempt: number, retryAfterMs?: number): number {
    return Math.max(backoffMs(attempt, this.random, this.options), retryAfterMs ?? 0);
  }

  /**
   * Runs `attempt` until it is done, retrying its retryable failures. Throws TestbayGaveUpError when the
   * attempts run out or the next wait would pass the deadline (the earlier of this call's budget and
   * `deadlineAt`); errors `attempt` throws are not retried here. With `untilDeadline` (rule 13: a wait that
   * must outlive a server's restart) neither the attempt limit nor the call's budget applies: only
   * `deadlineAt` ends the retries, each wait still the jittered backoff capped at `capMs`.
   *
   * `signal` ends the retries too: once it has fired no attempt starts, a backoff wait ends at once, and the
   * call rejects with the signal's reason (as fetch does), not TestbayGaveUpError. A stopping agent aborts
   * its claim this way (packages/agent/src/runtime/agent.ts `stop()`) and must not be held by a server that
   * answers 503 while it shuts down.
   */
  async run<T>(
    request: {
      method: string;
      path: string;
      deadlineAt?: number | undefined;
      untilDeadline?: boolean | undefined;
      signal?: AbortSignal | undefined;
    },
    attempt: (attempt: number) => Promise<AttemptOutcome<T>>,
  ): Promise<T> {
    const untilDeadline = request.untilDeadline === true && request.deadlineAt !== undefined;
    const budget = untilDeadline ? Infinity : this.clock.now() + this.options.deadlineMs;
    const deadline = Math.min(budget, request.deadlineAt ?? Infinity);
    const { signal } = request;
    for (let n = 0; ; n++) {
      signal?.throwIfAborted();
      const outcome = await attempt(n);
      if ("done" in outcome) return outcome.done;
      // The caller stopped wanting an answer: that, not the failure the abort may have caused, is the result.
      signal?.throwIfAborted();
      const attempts = n + 1;
      if (!untilDeadline && attempts >= this.options.maxAttempts) {
        throw new TestbayGaveUpError(request.method, request.path, attempts, "attempts", outcome.retry);
      }
      const delayMs = this.delayFor(n, outcome.retryAfterMs);
      if (this.clock.now() + delayMs > deadline) {
        throw new TestbayGaveUpError(request.method, request.path, attempts, "deadline", outcome.retry);
      }
      this.onRetry?.({
        method: request.method,
        path: request.path,
        untilDeadline,
        attempt: n,
        delayMs,
        error: outcome.retry,
      });
      await untilAborted(this.clock.sleep(delayMs, signal), signal);
    }
  }
}
