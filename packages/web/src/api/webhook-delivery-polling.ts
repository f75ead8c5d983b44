import type { WebhookDelivery } from "./webhooks.ts";

/**
 * How often an open delivery log is read again: every second while a message is about to be sent (just queued, or
 * its next attempt due within 10 s), so a test shows up delivered at once; every 30 s while a retry waits longer
 * (minutes to hours, per the schedule); not at all once nothing is pending.
 */
export function deliveryPollMs(deliveries: WebhookDelivery[] | undefined, now: number): number | false {
  const pending = deliveries?.filter((delivery) => delivery.status === "pending") ?? [];
  if (pending.length === 0) return false;
  const soon = pending.some(
    (delivery) =>
      delivery.next_attempt_at === null ||
      delivery.attempts.length === 0 ||
      Date.parse(delivery.next_attempt_at) - now <= 10_000,
  );
  return soon ? 1000 : 30_000;
}
