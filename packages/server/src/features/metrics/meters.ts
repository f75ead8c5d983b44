/**
 * What the other features tell the metrics as things happen (API.md §15): each call site is one line, and a
 * feature built without metrics (tests, benchmarks, TESTBAY_METRICS unset) passes nothing and calls nothing.
 * Only types here, so a feature that takes `Meters` does not load prom-client.
 */
export interface Meters {
  /** An execution became final on this instance (the statement that settled it ran here). */
  executionFinished(status: string): void;
  /**
   * This instance's claim started an execution (its first device run): how long it waited, from `queuedAt`
   * (the execution's created_at) to `startedAt`, both ISO times, on the platform of the run that started it.
   */
  executionStarted(platform: string, queuedAt: string, startedAt: string): void;
  /**
   * A webhook attempt sent from this instance ended: `delivered`, `retrying` (another attempt is scheduled) or
   * `failed` (the schedule is spent). `createdAt` is when the delivery was made, for the lag of delivered ones.
   */
  webhookAttempt(result: WebhookAttemptResult, createdAt: string): void;
  /** An upload's body (binary, test package, version file) was received and stored on this instance. */
  uploaded(bytes: number): void;
}

export type WebhookAttemptResult = "delivered" | "retrying" | "failed";
