/**
 * Sends due deliveries (API.md §9): claims them like jobs, signs them per Standard Webhooks (or formats them
 * for Slack), sends each with AttemptSender and records the attempt with what follows: delivered, retried per
 * the schedule, or, once the schedule is spent, failed with the endpoint disabled. Sends run side by side up
 * to a limit, so one receiver that never answers holds one slot for its 10 s, not the whole queue.
 */
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { type Clock, isoTime } from "../../clock.ts";
import { newId } from "../../ids.ts";
import type { SecretBox } from "./secret-box.ts";
import type { AttemptOutcome, AttemptSender } from "./send-attempt.ts";
import { slackMessage } from "./slack-message.ts";
import type { ClaimedDelivery, WebhooksRepo } from "./webhooks.repo.ts";

export interface DeliveryWorkerOptions {
  repo: WebhooksRepo;
  sender: AttemptSender;
  secrets: SecretBox;
  clock: Clock;
  /** Waits before each retry, in ms (TESTBAY_WEBHOOK_RETRY_SCHEDULE). */
  retryScheduleMs: readonly number[];
  /** How long a claim holds a delivery: longer than an attempt can take, so a live sender keeps it. */
  leaseMs: number;
  publicUrl: string | undefined;
  /** Sends in flight at most, per instance. */
  concurrency?: number;
  /** Where a failed round of claims goes (the log): rounds started by a finished send have no caller. */
  onError: (error: unknown) => void;
}

export class DeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly concurrency: number;
  private closing = false;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.concurrency = options.concurrency ?? 32;
  }

  /** Claims what is due (up to the free slots) and starts sending it; does not wait for the sends. */
  async tick(): Promise<number> {
    if (this.closing) return 0;
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const { repo, clock, leaseMs } = this.options;
    const now = clock.now();
    const leaseId = randomUUID();
    const claimed = await repo.claimDue(isoTime(now), free, leaseId, isoTime(now + leaseMs));
    // A full claim means more may be due: take them as slots free up instead of at the next round.
    const more = claimed.length === free;
    for (const delivery of claimed) {
      const sending: Promise<void> = this.deliver(delivery, leaseId).finally(() => {
        this.inFlight.delete(sending);
        if (more && !this.closing) this.tick().catch(this.options.onError);
      });
      this.inFlight.add(sending);
    }
    return claimed.length;
  }

  /**
   * Stops sending: sends in flight are cut off and not recorded, so their deliveries stay claimed until the
   * lease lapses and are then sent again (by another instance, or this one restarted).
   */
  async close(): Promise<void> {
    this.closing = true;
    await this.options.sender.destroy();
    await this.settle();
  }

  /** Waits for the sends in flight. */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async deliver(delivery: ClaimedDelivery, leaseId: string): Promise<void> {
    const { repo, clock, sender } = this.options;
    const at = isoTime(clock.now());
    let outcome: AttemptOutcome;
    try {
      const { headers, body } = this.request(delivery);
      outcome = await sender.send(delivery.url, headers, body);
    } catch (error) {
      // A secret that no longer opens (the server's signing key was replaced): say so in the log.
      outcome = {
        statusCode: null,
        durationMs: 0,
        error: `not sent: ${(error as Error).message}`,
        responseExcerpt: null,
      };
    }
    if (this.closing) return;
    const attempts = delivery.attempts + 1;
    const schedule = this.options.retryScheduleMs;
    const succeeded = outcome.error === null;
    const retryIn = schedule[attempts - 1];
    await repo.recordAttempt(
      {
        id: newId("wha", clock.now()),
        delivery_id: delivery.id,
        at,
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        response_excerpt: outcome.responseExcerpt,
      },
      { id: delivery.id, webhookId: delivery.webhook_id, leaseId },
      succeeded
        ? { status: "delivered" }
        : retryIn !== undefined
          ? { status: "pending", attempts, nextAttemptAt: isoTime(clock.now() + retryIn) }
          : {
              status: "failed",
              attempts,
              disabledReason: `Disabled at ${isoTime(clock.now())}: message ${delivery.id} (${delivery.type}) failed ${attempts} attempts over the whole retry schedule; the last: ${outcome.error}. Fix the receiver, then PATCH {"enabled": true} and redeliver what it missed.`,
            },
    );
  }

  private request(delivery: ClaimedDelivery): { headers: Record<string, string>; body: string } {
    if (delivery.format === "slack") {
      const message = JSON.parse(delivery.payload) as { type: string; data: Record<string, unknown> };
      // Slack checks no signature and wants its own body; the Standard Webhooks headers would mean nothing.
      return {
        headers: {},
        body: JSON.stringify(slackMessage(message.type, message.data, this.options.publicUrl)),
      };
    }
    if (delivery.secret === null) throw new Error("the endpoint has no signing secret");
    const secret = this.options.secrets.open(delivery.secret);
    // The receiver compares webhook-timestamp with its own clock to refuse replays: it is the real time of
    // this attempt, not the server's (tests move that by hand).
    const timestamp = new Date();
    const signature = new Webhook(secret).sign(delivery.id, timestamp, delivery.payload);
    return {
      headers: {
        "webhook-id": delivery.id,
        "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body: delivery.payload,
    };
  }
}
