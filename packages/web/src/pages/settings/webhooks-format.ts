import type { Webhook, WebhookAttempt, WebhookDelivery } from "../../api/webhooks.ts";

// How the webhooks section says a webhook's state and its deliveries' attempts in words: pure, so tested alone.

/** Enabled, or disabled and why: the reason the server gave says what to fix before enabling it again. */
export function webhookStateText(webhook: Pick<Webhook, "enabled" | "disabled_reason">): string {
  if (webhook.enabled) return "enabled";
  return webhook.disabled_reason ? `disabled: ${webhook.disabled_reason}` : "disabled";
}

/** How a webhook is doing, from its state and its newest deliveries (GET /v1/webhooks/{id}/deliveries). */
export type WebhookHealth =
  | { state: "disabled"; label: string }
  | { state: "enabled"; label: "enabled" }
  | {
      state: "failing";
      label: "failing";
      /** How many messages in a row, by their latest attempt, failed (or are failing, their retries waiting). */
      failed: number;
      /** The newest failed attempt's error, with the start of the answer's body when there was one. */
      lastError: string;
      lastErrorAt: string;
      /** The soonest retry of the failing messages; null once their retries are spent. */
      nextAttemptAt: string | null;
    };

/**
 * Disabled (and why), failing (the latest attempts failed: how many messages in a row, the last error, the next
 * try), or enabled (the latest attempt was delivered, or nothing was tried yet). Enabled is all a webhook's own
 * object says: a receiver refusing every message shows only in its deliveries, so they are read. Messages are
 * taken by their latest attempt, newest first: an old message redelivered now says more than its place in the log.
 */
export function webhookHealth(
  webhook: Pick<Webhook, "enabled" | "disabled_reason">,
  deliveries: readonly Pick<WebhookDelivery, "status" | "attempts" | "next_attempt_at">[] | undefined,
): WebhookHealth {
  if (!webhook.enabled) return { state: "disabled", label: webhookStateText(webhook) };
  // Messages not tried yet say nothing of the receiver.
  const tried = (deliveries ?? [])
    .flatMap((delivery) => {
      const last = delivery.attempts.at(-1);
      return last ? [{ delivery, last }] : [];
    })
    .sort((a, b) => Date.parse(b.last.at) - Date.parse(a.last.at));
  const streak = tried.findIndex(({ delivery }) => delivery.status === "delivered");
  const failing = streak === -1 ? tried : tried.slice(0, streak);
  const newest = failing[0];
  if (!newest) return { state: "enabled", label: "enabled" };
  const { last } = newest;
  const answer = last.error ?? (last.status_code === null ? "no answer" : `HTTP ${last.status_code}`);
  const body = bodyExcerpt(last.response_body, 80);
  const retries = failing
    .map(({ delivery }) => (delivery.status === "pending" ? delivery.next_attempt_at : null))
    .filter((at): at is string => at !== null)
    .sort();
  return {
    state: "failing",
    label: "failing",
    failed: failing.length,
    lastError: body ? `${answer} "${body}"` : answer,
    lastErrorAt: last.at,
    nextAttemptAt: retries[0] ?? null,
  };
}

/** A duration as people read it: milliseconds under a second, else seconds with one decimal. */
export function durationText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** One attempt in a line: the answer's status (or that none came), how long it took, and what went wrong. */
export function attemptText(attempt: WebhookAttempt): string {
  const answer = attempt.status_code === null ? "no answer" : `HTTP ${attempt.status_code}`;
  const text = `${answer} in ${durationText(attempt.duration_ms)}`;
  // A refusal's error is its status ("HTTP 500"): said once is enough.
  return attempt.error && attempt.error !== answer ? `${text}: ${attempt.error}` : text;
}

/** The start of what the receiver answered, on one line: enough to recognise its error page or message. */
export function bodyExcerpt(body: string | null, max = 120): string | undefined {
  const line = body?.replace(/\s+/g, " ").trim();
  if (!line) return undefined;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
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

/** A body as sent, for reading: JSON indented two spaces when it parses (ours always does), else as it is. */
export function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** The fields of the webhook form the API's `errors[].path` can point at. */
export type WebhookField = "url" | "events" | "description";

/**
 * The form field a refusal is about (`/url`, `/events/2`, `/description`), so its detail and fix show under that
 * field; undefined when it is about none (not signed in, a webhook deleted meanwhile): it shows under the form.
 */
export function problemField(errors: unknown): WebhookField | undefined {
  if (!Array.isArray(errors)) return undefined;
  for (const item of errors as Array<{ path?: unknown }>) {
    const first = typeof item?.path === "string" ? item.path.split("/")[1] : undefined;
    if (first === "url" || first === "events" || first === "description") return first;
  }
  return undefined;
}

/** What the edit form holds: the URL, the events ticked, the description (blank for none). */
export interface WebhookDraft {
  url: string;
  events: readonly string[];
  description: string;
}

/**
 * Only what the edit changed, as PATCH takes it: the audit log then says what changed, and a format never is
 * (PATCH has none). A description emptied is null (removed). Events compare as sets: ticking order is no change.
 */
export function webhookChanges(
  webhook: Pick<Webhook, "url" | "events" | "description">,
  draft: WebhookDraft,
): { url?: string; events?: string[]; description?: string | null } {
  const changes: { url?: string; events?: string[]; description?: string | null } = {};
  const url = draft.url.trim();
  if (url !== webhook.url) changes.url = url;
  const before = new Set(webhook.events);
  if (draft.events.length !== before.size || draft.events.some((event) => !before.has(event))) {
    changes.events = [...draft.events];
  }
  const description = draft.description.trim() || null;
  if (description !== (webhook.description ?? null)) changes.description = description;
  return changes;
}
