import { type AgentEvent, TestbayApiError } from "@testbay/client";
import { pause } from "./pause.ts";

/** An event as the job runner makes it; the reporter numbers it. */
export type NewEvent = AgentEvent extends infer E ? (E extends AgentEvent ? Omit<E, "seq"> : never) : never;

export interface EventReporterOptions {
  send(events: AgentEvent[]): Promise<{ cancel_requested: boolean }>;
  /** Called when the server says a cancel was requested (events answers carry it, like heartbeats). */
  onCancelRequested(): void;
  /** How long events wait to be sent together (they are sent sooner when a batch fills). */
  flushMs?: number;
  maxBatch?: number;
}

/**
 * Sends a job's events in batches: one call per second or per 500 events instead of one per line, which
 * keeps a chatty test under the agent rate limit. Events are numbered here (seq), so a batch resent after
 * a lost answer is stored once. One batch is in flight at a time, so the server sees them in order; a
 * batch that fails stays queued for the next flush.
 */
export class EventReporter {
  private seq = 0;
  private queued: AgentEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  private lastError: unknown;

  constructor(private readonly options: EventReporterOptions) {}

  push(event: NewEvent): void {
    this.queued.push({ ...event, seq: this.seq++ } as AgentEvent);
    if (this.queued.length >= (this.options.maxBatch ?? 500)) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs ?? 1000);
  }

  /** Sends everything queued so far; resolves when it was sent or failed (see `failure`). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sending = this.sending.then(() => this.sendQueued());
    return this.sending;
  }

  /**
   * Sends everything queued before a job completes: a run must not end with log lines or test cases the server
   * never got. A send that fails with what may pass (an answer 5xx, or the SDK's retries of a network error run
   * out) is tried again after a doubling pause, `tries` times in all; the last failure is thrown if events are
   * still unsent, and the job is not completed (its lease lapses and the server decides). A refusal (4xx: the
   * lease is gone, an event the server will never take) is not tried again: the job goes on to complete.
   * A server instance restarting under a rolling restart answered a batch 500 and the run ended passed with an
   * empty log (packages/server/src/rolling-restart.scaled.test.ts).
   */
  async flushAll(signal: AbortSignal, { tries = 6, firstPauseMs = 500 } = {}): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await this.flush();
      const failure = this.failure;
      if (failure === undefined) return;
      if (failure instanceof TestbayApiError && failure.status < 500) return;
      if (attempt >= tries) throw failure;
      await pause(firstPauseMs * 2 ** (attempt - 1), signal);
    }
  }

  /** The last error a send ended with, if the queue still holds unsent events. */
  get failure(): unknown {
    return this.queued.length > 0 ? this.lastError : undefined;
  }

  private async sendQueued(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.slice(0, 1000);
      try {
        const answer = await this.options.send(batch);
        this.queued.splice(0, batch.length);
        this.lastError = undefined;
        if (answer.cancel_requested) this.options.onCancelRequested();
      } catch (error) {
        this.lastError = error;
        return;
      }
    }
  }
}
