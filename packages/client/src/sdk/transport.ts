import { type Clock, untilAborted } from "./clock.ts";
import { type Problem, TestbayApiError, TestbayGaveUpError, TestbayNetworkError } from "./errors.ts";
import type { Pacer } from "./pacing.ts";
import {
  type AttemptOutcome,
  isRetryableStatus,
  mayRetryNetworkError,
  parseRetryAfter,
  type RetryPolicy,
} from "./retry-policy.ts";
import type { TokenCache } from "./token-cache.ts";

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Seen after every answer the SDK receives, retried ones included: for logs, metrics and tests. */
export interface ResponseEvent {
  method: string;
  path: string;
  status: number;
  /** 0 for the first attempt of a call. */
  attempt: number;
  headers: Headers;
}

export interface CallOptions {
  method: string;
  /** Path below the base URL, e.g. `/apps/com.example/versions`: segments already encoded. */
  path: string;
  query?: Record<string, string | number | undefined> | undefined;
  json?: unknown;
  /** A raw body, made anew for each attempt (a stream can be read only once). */
  body?:
    | (() => {
        body: NonNullable<RequestInit["body"]> | AsyncIterable<Uint8Array>;
        headers?: Record<string, string>;
      })
    | undefined;
  headers?: Record<string, string> | undefined;
  /** Sent on every attempt; it also makes the call safe to resend after a network error (rule 5). */
  idempotencyKey?: string | undefined;
  /** Send without a token (the token endpoint itself). */
  anonymous?: boolean | undefined;
  /** Resending after a network error is harmless even though the method is not idempotent. */
  safeToResend?: boolean | undefined;
  /** Stop retrying past this time (ms since the epoch), whatever the retry budget says. */
  deadlineAt?: number | undefined;
  /**
   * Retry a server that does not answer (network errors, 502/503/504) until `deadlineAt`, with no attempt
   * limit (CLIENT.md rule 13): for the reads of a wait, which must outlive a server's restart. Such a call
   * also outlasts a token request that meets the outage, and asks once for a new token when the restarted
   * server refuses the old one (401 invalid_access_token).
   */
  untilDeadline?: boolean | undefined;
  /**
   * Runs before each resend (attempt ≥ 1). Throwing stops the retries with that error: an upload uses it to
   * look whether its previous attempt landed before sending the whole file again.
   */
  beforeResend?: ((attempt: number) => Promise<void>) | undefined;
  signal?: AbortSignal | undefined;
}

export interface TransportOptions {
  baseUrl: string;
  fetch: FetchLike;
  /** For calls whose body is a stream (uploads); `fetch` when absent. */
  streamFetch?: FetchLike | undefined;
  clock: Clock;
  pacer: Pacer | undefined;
  retry: RetryPolicy;
  tokens: TokenCache;
  userAgent: string;
  onResponse?: ((event: ResponseEvent) => void) | undefined;
}

/** Percent-encodes one path segment (package names and versions are safe already; IDs from users may not be). */
export const segment = (value: string) => encodeURIComponent(value);

async function readProblem(response: Response): Promise<Problem> {
  const text = await response.text().catch(() => "");
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === "object" ? (parsed as Problem) : { detail: text.slice(0, 500) };
  } catch {
    return { detail: text.slice(0, 500) };
  }
}

/**
 * Sends API calls the way every one must go (CLIENT.md rules 1–5): paced, with the one cached token as
 * x-api-key, retried only when retryable, with the same Idempotency-Key on every attempt; a refusal becomes a
 * TestbayApiError carrying the server's problem document.
 */
export class Transport {
  readonly baseUrl: string;
  /** Counters for this process: what a pipeline log or a test may want to know. */
  readonly stats = { requests: 0, retries: 0, rateLimited: 0 };

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
  }

  url(path: string, query?: CallOptions["query"]): string {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  /** Sends the call, retrying as the rules allow; resolves with the 2xx response, body unread. */
  async send(call: CallOptions): Promise<Response> {
    const method = call.method.toUpperCase();
    const url = this.url(call.path, call.query);
    const resendable =
      call.safeToResend === true || mayRetryNetworkError(method, call.idempotencyKey !== undefined);
    const renewal = { tokenRenewed: false };
    return this.options.retry.run(
      {
        method,
        path: call.path,
        deadlineAt: call.deadlineAt,
        untilDeadline: call.untilDeadline,
        // The signal ends the retries and their waits, not only the fetch in flight (retry-policy.ts).
        signal: call.signal,
      },
      async (attempt) => {
        if (attempt > 0) this.stats.retries += 1;
        return this.attempt(call, method, url, attempt, resendable, renewal);
      },
    );
  }

  /** Sends the call and parses its JSON answer. */
  async json<T>(call: CallOptions): Promise<{ status: number; headers: Headers; body: T }> {
    const response = await this.send(call);
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : undefined) as T,
    };
  }

  private async attempt(
    call: CallOptions,
    method: string,
    url: string,
    attempt: number,
    resendable: boolean,
    renewal: { tokenRenewed: boolean },
  ): Promise<AttemptOutcome<Response>> {
    const { clock, pacer, tokens } = this.options;
    if (attempt > 0) await call.beforeResend?.(attempt);
    // The pacer's clock is not told of the signal (pacing.ts); the call stops waiting for it all the same.
    if (pacer) await untilAborted(pacer.take(), call.signal);
    const headers: Record<string, string> = {
      "user-agent": this.options.userAgent,
      accept: "application/json",
    };
    const init: RequestInit & { duplex?: "half" } = { method, headers, redirect: "error" };
    if (call.signal) init.signal = call.signal;
    let token: string | undefined;
    try {
      token = call.anonymous ? undefined : await tokens.get(call.signal);
    } catch (error) {
      if (call.signal?.aborted) throw error;
      // The token request has its own retries; a wait outlasts them when they met the same outage.
      if (
        call.untilDeadline &&
        (error instanceof TestbayGaveUpError || error instanceof TestbayNetworkError)
      ) {
        return { retry: error };
      }
      throw error;
    }
    if (token !== undefined) headers["x-api-key"] = token;
    if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
    if (call.json !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(call.json);
    } else if (call.body) {
      const made = call.body();
      Object.assign(headers, made.headers);
      init.body = made.body as RequestInit["body"];
      init.duplex = "half";
    }
    Object.assign(headers, call.headers);

    let response: Response;
    this.stats.requests += 1;
    try {
      const fetcher = call.body ? (this.options.streamFetch ?? this.options.fetch) : this.options.fetch;
      response = await fetcher(url, init);
    } catch (error) {
      if (call.signal?.aborted) throw error;
      const failure = new TestbayNetworkError(method, call.path, error);
      if (resendable) return { retry: failure };
      throw failure;
    }
    pacer?.update(response.headers);
    this.options.onResponse?.({
      method,
      path: call.path,
      status: response.status,
      attempt,
      headers: response.headers,
    });
    if (response.ok) return { done: response };

    const problem = method === "HEAD" ? {} : await readProblem(response);
    if (method === "HEAD") await response.body?.cancel().catch(() => {});
    const error = new TestbayApiError({ status: response.status, problem, method, path: call.path });
    if (response.status === 429) this.stats.rateLimited += 1;
    if (token !== undefined && response.status === 401 && error.code === "invalid_access_token") {
      tokens.discard(token);
      // Only a wait asks again (once), with the same credentials: a restarted server may know its tokens no
      // more. Every other call reports the 401 (rule 2); its next call gets the new token.
      if (call.untilDeadline && !tokens.fixed && !renewal.tokenRenewed) {
        renewal.tokenRenewed = true;
        return { retry: error };
      }
    }
    if (isRetryableStatus(response.status)) {
      return {
        retry: error,
        retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), clock.now()),
      };
    }
    throw error;
  }
}
