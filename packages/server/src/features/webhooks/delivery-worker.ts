/**
 * Sends due deliveries (API.md §9): claims them like jobs, signs them per Standard Webhooks (or formats them
 * for Slack), sends each with AttemptSender and records the attempt, with its request, and what follows:
 * delivered, retried per the schedule, or, once the schedule is spent, failed with the endpoint disabled. Sends
 * run side by side up to a limit, so one receiver that never answers holds one slot for its 10 s, not the whole
 * queue.
 *
 * Claims start on a signal (tick: deliveries were inserted, a send ended with more due, a retry this instance
 * scheduled is due) and otherwise on the slow backstop poll (sendBackstopMs): never two claims at once.
 */
import { randomUUID } from "node:crypto";
import { type Clock, isoTime } from "../../clock.ts";
import { newId } from "../../ids.ts";
import type { Meters } from "../metrics/index.ts";
import { CoalescedRound } from "./coalesced-round.ts";
import type { SecretBox } from "./secret-box.ts";
import type { AttemptOutcome, AttemptSender } from "./send-attempt.ts";
import { storedRequest, type WebhookRequest, webhookRequest } from "./webhook-request.ts";
import type { ClaimedDelivery, WebhooksRepo } from "./webhooks.repo.ts";

/**
 * How often each instance looks for due deliveries without being told. Deliveries start on a signal: the
 * fan-out, /test and /redeliver tick as they insert them, and a retry this instance scheduled sets a timer for
 * its time. The poll only catches what no signal here announced: a retry scheduled by an instance that died
 * since, a delivery whose sender died mid-flight (its lease lapsed), an endpoint enabled on another instance.
 * One second late is fine for those, and an idle instance makes one small query a second.
 */
export const sendBackstopMs = 1000;

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
  /** Told how each attempt ended (API.md §15); none without TESTBAY_METRICS. */
  meters?: Pick<Meters, "webhookAttempt"> | undefined;
}

export class DeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly concurrency: number;
  private readonly claims: CoalescedRound;
  private closing = false;
  /** The one timer for the earliest retry this instance scheduled, and when that retry is due (server clock). */
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDue = Number.POSITIVE_INFINITY;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.concurrency = options.concurrency ?? 32;
    this.claims = new CoalescedRound(() => this.claimAndSend(), options.onError);
  }

  /**
   * Claims what is due (up to the free slots) and starts sending it; does not wait for the sends. A tick while
   * a claim runs claims once more after it, however many ask meanwhile.
   */
  tick(): Promise<void> {
    return this.claims.run();
  }

  /** tick() for signals: deliveries were inserted (fan-out, /test, /redeliver, an endpoint enabled). */
  wake(): void {
    this.claims.wake();
  }

  /**
   * Stops sending: sends in flight are cut off and not recorded, so their deliveries stay claimed until the
   * lease lapses and are then sent again (by another instance, or this one restarted).
   */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.retryTimer);
    await this.options.sender.destroy();
    await this.claims.idle();
    await this.settle();
  }

  /** Waits for the sends in flight. */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async claimAndSend(): Promise<void> {
    if (this.closing) return;
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const { repo, clock, leaseMs } = this.options;
    const now = clock.now();
    const leaseId = randomUUID();
    const claimed = await repo.claimDue(isoTime(now), free, leaseId, isoTime(now + leaseMs));
    // A full claim means more may be due: take them as slots free up instead of at the next round.
    const more = claimed.length === free;
    for (const delivery of claimed) {
      // A send that fails to record its attempt (the database away) goes to the log; its lease lapses and the
      // delivery is sent again. It has no caller, so it must not end as an unhandled rejection.
      const sending: Promise<void> = this.deliver(delivery, leaseId)
        .catch(this.options.onError)
        .finally(() => {
          this.inFlight.delete(sending);
          if (more && !this.closing) this.wake();
        });
      this.inFlight.add(sending);
    }
  }

  /**
   * Ticks when a retry this instance scheduled is due (`due`, on the server's clock), if it is the earliest it
   * waits for: retries go out on time rather than at the next backstop round. One timer: later retries are
   * taken by the round it starts if due by then, else by the backstop poll.
   */
  private tickAt(due: number): void {
    if (this.closing || due >= this.retryDue) return;
    clearTimeout(this.retryTimer);
    this.retryDue = due;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        this.retryDue = Number.POSITIVE_INFINITY;
        // Node counts a timer from its event loop's cached time, so it may fire a little early: wait the rest.
        if (this.options.clock.now() < due) this.tickAt(due);
        else this.wake();
      },
      Math.max(0, due - this.options.clock.now()),
    );
    this.retryTimer.unref();
  }

  private async deliver(delivery: ClaimedDelivery, leaseId: string): Promise<void> {
    const { repo, clock, sender } = this.options;
    const at = isoTime(clock.now());
    let outcome: AttemptOutcome;
    let request: WebhookRequest | undefined;
    try {
      request = this.request(delivery);
      outcome = await sender.send(request.url, request.headers, request.body);
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
    const retryAt = retryIn === undefined ? undefined : clock.now() + retryIn;
    await repo.recordAttempt(
      {
        id: newId("wha", clock.now()),
        delivery_id: delivery.id,
        at,
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        response_excerpt: outcome.responseExcerpt,
        ...(request
          ? storedRequest(request, delivery.payload)
          : { request_url: null, request_headers: null, request_body: null }),
      },
      { id: delivery.id, webhookId: delivery.webhook_id, leaseId },
      succeeded
        ? { status: "delivered" }
        : retryAt !== undefined
          ? { status: "pending", attempts, nextAttemptAt: isoTime(retryAt) }
          : {
              status: "failed",
              attempts,
              disabledReason: `Disabled at ${isoTime(clock.now())}: message ${delivery.id} (${delivery.type}) failed ${attempts} attempts over the whole retry schedule; the last: ${outcome.error}. Fix the receiver, then PATCH {"enabled": true} and redeliver what it missed.`,
            },
    );
    this.options.meters?.webhookAttempt(
      succeeded ? "delivered" : retryAt !== undefined ? "retrying" : "failed",
      delivery.created_at,
    );
    if (!succeeded && retryAt !== undefined) this.tickAt(retryAt);
  }

  private request(delivery: ClaimedDelivery): WebhookRequest {
    const { secrets, publicUrl } = this.options;
    const secret =
      delivery.format === "standard" && delivery.secret !== null ? secrets.open(delivery.secret) : undefined;
    return webhookRequest(delivery, secret, publicUrl, new Date());
  }
}
