// How `testbay webhooks …` shows webhooks and their delivery logs to a person: pure functions of the API's
// objects, so what a person reads is tested without a server.
import type { Webhook, WebhookDelivery, WebhookFormat } from "../sdk/models.ts";
import { UsageError } from "./exit-codes.ts";
import { table } from "./output.ts";

/** The events a webhook can subscribe to (API.md §9), for help texts; the server is what refuses others. */
export const webhookEvents = [
  "execution.started",
  "execution.finished",
  "version.uploaded",
  "test.flaky_detected",
] as const;

/** --format, checked before anything is sent: a typo should not cost a call. */
export function webhookFormat(value: string | undefined): WebhookFormat | undefined {
  if (value === undefined || value === "standard" || value === "slack") return value;
  throw new UsageError(`--format ${value}: say standard or slack.`);
}

/** Enabled, or disabled and why: a webhook the server disabled says what to fix. */
export function webhookState(webhook: Pick<Webhook, "enabled" | "disabled_reason">): string {
  if (webhook.enabled) return "enabled";
  return webhook.disabled_reason ? `disabled: ${webhook.disabled_reason}` : "disabled";
}

export function webhookTable(webhooks: Webhook[]): string {
  const rows = [["WEBHOOK", "URL", "EVENTS", "FORMAT", "STATE", "DESCRIPTION"]];
  for (const w of webhooks) {
    rows.push([w.id, w.url, w.events.join(","), w.format, webhookState(w), w.description ?? "-"]);
  }
  return table(rows);
}

/** What the last attempt of a message met: its answer's status, or its error; "-" before the first. */
export function lastAnswer(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  if (!last) return "-";
  const status = last.status_code === null ? "no answer" : `HTTP ${last.status_code}`;
  // A refusal's error is its status ("HTTP 500"): said once is enough.
  return last.error && last.error !== status ? `${status}: ${last.error}` : status;
}

export function deliveryTable(deliveries: WebhookDelivery[]): string {
  const rows = [["DELIVERY", "TYPE", "STATUS", "ATTEMPTS", "LAST ATTEMPT", "LAST ANSWER", "NEXT ATTEMPT"]];
  for (const d of deliveries) {
    rows.push([
      d.id,
      d.type,
      d.status,
      String(d.attempts.length),
      d.attempts.at(-1)?.at ?? "-",
      lastAnswer(d),
      d.next_attempt_at ?? "-",
    ]);
  }
  return table(rows);
}

/** `testbay webhooks show`: the webhook, then its last deliveries, newest first. */
export function webhookDetails(webhook: Webhook, deliveries: WebhookDelivery[]): string {
  const lines = [
    `Webhook ${webhook.id}`,
    `  url:         ${webhook.url}`,
    `  events:      ${webhook.events.join(", ")}`,
    `  format:      ${webhook.format}${webhook.format === "standard" ? " (signed per Standard Webhooks)" : " (unsigned)"}`,
    `  state:       ${webhookState(webhook)}`,
    `  description: ${webhook.description ?? "-"}`,
    `  created:     ${webhook.created_at}`,
    "",
  ];
  if (deliveries.length === 0) {
    lines.push(`No deliveries yet: testbay webhooks test ${webhook.id} sends a webhook.test message.`);
    return `${lines.join("\n")}\n`;
  }
  lines.push("Last deliveries, newest first:");
  return `${lines.join("\n")}\n${deliveryTable(deliveries)}`;
}
