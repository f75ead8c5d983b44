import type { AgentEvent } from "@testbay/client";

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
