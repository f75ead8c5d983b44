import type { Webhook, WebhookAttempt, WebhookDelivery } from "../../api/webhooks.ts";

// How the webhooks section says a webhook's state and its deliveries' attempts in words: pure, so tested alone.

/** Enabled, or disabled and why: the reason the server gave says what to fix before enabling it again. */
export function webhookStateText(webhook: Pick<Webhook, "enabled" | "disabled_reason">): string {
  if (webhook.enabled) return "enabled";
  return webhook.disabled_reason ? `disabled: ${webhook.disabled_reason}` : "disabled";
}

/** A duration as people read it: milliseconds under a second, else seconds with one decimal. */
export function durationText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** One attempt in a line: the answer's status (or that none came), how long it took, and what went wrong. */
export function attemptText(attempt: WebhookAttempt): string {
  const answer = attempt.status_code === null ? "no answer" : `HTTP ${attempt.status_code}`;
  const text = `${answer} in ${durationText(attempt.duration_ms)}`;
  return attempt.error ? `${text}: ${attempt.error}` : text;
}

/** A delivery's status with how many attempts it took, e.g. "failed after 3 attempts". */
export function deliveryStatusText(delivery: Pick<WebhookDelivery, "status" | "attempts">): string {
  const count = delivery.attempts.length;
  const attempts = `${count} attempt${count === 1 ? "" : "s"}`;
  switch (delivery.status) {
    case "delivered":
      return `delivered after ${attempts}`;
    case "failed":
      return `failed after ${attempts}`;
    default:
      return count === 0 ? "pending" : `pending, ${attempts} so far`;
  }
}
