// How `testbay webhooks …` shows webhooks and their delivery logs to a person: pure functions of the API's
// objects, so what a person reads is tested without a server.
import type { Webhook, WebhookAttempt, WebhookDelivery, WebhookFormat } from "../sdk/models.ts";
import { UsageError } from "./exit-codes.ts";
import { formatBytes, table } from "./output.ts";

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

/** What an attempt met: its answer's status, or its error. */
function answerOf(attempt: WebhookAttempt): string {
  const status = attempt.status_code === null ? "no answer" : `HTTP ${attempt.status_code}`;
  // A refusal's error is its status ("HTTP 500"): said once is enough.
  return attempt.error && attempt.error !== status ? `${status}: ${attempt.error}` : status;
}

/** What the last attempt of a message met: its answer's status, or its error; "-" before the first. */
export function lastAnswer(delivery: WebhookDelivery): string {
  const last = delivery.attempts.at(-1);
  return last ? answerOf(last) : "-";
}

/** How much of a body `webhooks show` prints: a line or two; an execution's body is over a KiB of JSON. */
export const shownBodyChars = 240;

/**
 * Each message's requests: every attempt with where it went (an endpoint's URL may change between attempts) and
 * what came back, then the body it sends, said once (it is the same on every attempt) and cut to a line or two.
 * Headers and whole bodies are in --json.
 */
export function deliveryRequests(deliveries: WebhookDelivery[]): string {
  const blocks = deliveries.map((d) => {
    const lines = [`${d.id}  ${d.type}  ${d.status}`];
    d.attempts.forEach((attempt, i) => {
      const where = attempt.request
        ? `POST ${attempt.request.url}`
        : "(request not kept: sent before the server kept them)";
      lines.push(`  ${i + 1}. ${attempt.at}  ${where}  → ${answerOf(attempt)} in ${attempt.duration_ms} ms`);
    });
    if (d.attempts.length === 0)
      lines.push(`  not sent yet${d.next_attempt_at ? `: due ${d.next_attempt_at}` : ""}`);
    const body = d.request_body;
    const size = formatBytes(new TextEncoder().encode(body).length);
    const shown = body.length > shownBodyChars ? `${body.slice(0, shownBodyChars)}…` : body;
    lines.push(`  body${d.attempts.length === 0 ? " to send" : ""} (${size}): ${shown}`);
    return lines.join("\n");
  });
  return `${blocks.join("\n\n")}\n`;
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
  return `${lines.join("\n")}\n${deliveryTable(deliveries)}\nRequests, newest first (headers and whole bodies: --json):\n${deliveryRequests(deliveries)}`;
}
