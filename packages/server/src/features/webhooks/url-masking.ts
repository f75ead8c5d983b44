import type { Principal } from "../../http/fastify-types.ts";

/**
 * A webhook's URL is often its secret: a Slack incoming webhook's path is the key that posts to the channel,
 * and other receivers carry tokens in the path, the query or credentials. API.md §9: for everyone but its
 * managers it shows only scheme, host and port. Managers are the callers who may change webhooks (routes:
 * ci and admin clients, member and admin people); of those who may read them, that leaves viewers.
 */
export function managesWebhooks(principal: Principal): boolean {
  return principal.person === undefined || principal.person.role !== "viewer";
}

/** `https://hooks.slack.com/services/T0/B0/xyz` → `https://hooks.slack.com`; the port stays when not the default. */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return "";
  }
}

/** A webhook as a viewer sees it. */
export function maskedWebhook<W extends { url: string }>(webhook: W): W {
  return { ...webhook, url: maskedUrl(webhook.url) };
}

/** A message of the delivery log as a viewer sees it: each attempt's request URL masked too. */
export function maskedDelivery<D extends { attempts: Array<{ request: { url: string } | null }> }>(
  delivery: D,
): D {
  return {
    ...delivery,
    attempts: delivery.attempts.map((attempt) =>
      attempt.request
        ? { ...attempt, request: { ...attempt.request, url: maskedUrl(attempt.request.url) } }
        : attempt,
    ),
  };
}
