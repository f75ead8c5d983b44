import type { Clock } from "../sdk/clock.ts";
import { describeCause, TestbayApiError, TestbayGaveUpError, TestbayNetworkError } from "../sdk/errors.ts";
import type { RetryEvent } from "../sdk/retry-policy.ts";
import { formatDuration } from "./duration.ts";

/** Statuses of a server that is not there: a proxy or gateway answering for it (CLIENT.md rule 13). */
const gatewayStatuses = new Set([502, 503, 504]);

/** The server did not answer: no connection, a dropped one, or a gateway's 502/503/504 in its place. */
export function isUnanswered(error: Error): boolean {
  if (error instanceof TestbayNetworkError) return true;
  if (error instanceof TestbayApiError) return gatewayStatuses.has(error.status);
  // A token request that gave up on the same outage, inside a wait's read.
  if (error instanceof TestbayGaveUpError) return isUnanswered(error.lastError);
  return false;
}

/** Why a request got no answer, in the network's words: "connect ECONNREFUSED 127.0.0.1:8080", "other side closed (UND_ERR_SOCKET)". */
function noAnswerReason(error: TestbayNetworkError): string {
  const fetchError = error.cause;
  // fetch's own message is only "fetch failed"; its cause says what the socket met.
  const inner =
    fetchError instanceof Error && fetchError.cause instanceof Error ? fetchError.cause : fetchError;
  if (!(inner instanceof Error)) return describeCause(inner);
  const code = (inner as { code?: unknown }).code;
  return typeof code === "string" && !inner.message.includes(code)
    ? `${inner.message} (${code})`
    : inner.message;
}

/** What a failed attempt met, in a few words: "answered 503 http_503", "got no answer: connect ECONNREFUSED …". */
export function whatItMet(error: Error): string {
  if (error instanceof TestbayApiError) return `answered ${error.status} ${error.code}`;
  if (error instanceof TestbayNetworkError) return `got no answer: ${noAnswerReason(error)}`;
  if (error instanceof TestbayGaveUpError) return whatItMet(error.lastError);
  return `failed (${error.message})`;
}

/** The note for one retry outside an outage: "note: GET /executions got no answer (…); retrying in 1.2s (attempt 2)." */
export function retryLine(event: RetryEvent): string {
  return `note: ${event.method} ${event.path} ${whatItMet(event.error)}; retrying in ${formatDuration(event.delayMs)} (attempt ${event.attempt + 2}).`;
}

const clockTime = (ms: number) => `${new Date(ms).toISOString().slice(11, 19)} UTC`;

/**
 * While a wait follows executions, a server that does not answer is retried until --timeout (rule 13). A log
 * line per retry would bury the job's output during a deploy: the person sees one line when the server stops
 * answering, saying since when, and one when it answers again. Retries outside a wait keep their notes.
 */
export class OutageNotice {
  private since: number | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly say: (line: string) => void,
  ) {}

  /** Told of every retry; false when the retry is not part of an outage and wants its own note. */
  retry(event: RetryEvent): boolean {
    if (this.since !== undefined) return true;
    if (!event.untilDeadline || !isUnanswered(event.error)) return false;
    this.since = this.clock.now();
    this.say(
      `Server not answering since ${clockTime(this.since)}: ${event.method} ${event.path} ${whatItMet(event.error)}. The executions go on there; waiting for it until --timeout, asking again at most every 30s.`,
    );
    return true;
  }

  /** Told of every answer: a real one (not a gateway's 502/503/504) ends the outage. */
  answered(status: number): void {
    if (this.since === undefined || gatewayStatuses.has(status)) return;
    const lasted = this.clock.now() - this.since;
    this.since = undefined;
    this.say(`Server answers again (not answering for ${formatDuration(lasted)}); waiting goes on.`);
  }
}
