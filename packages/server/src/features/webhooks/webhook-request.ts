/**
 * What one attempt of a delivery sends (API.md §9): the URL, every header and the body. Made here once, then
 * both sent (AttemptSender) and kept with the attempt, so the delivery log shows what the receiver got.
 */
import { Webhook } from "standardwebhooks";
import { slackMessage } from "./slack-message.ts";
import type { AttemptRow, WebhookFormat } from "./webhooks.repo.ts";

export interface WebhookRequest {
  url: string;
  /** Every header Testbay sets, lower-case names (undici adds host, content-length and connection). */
  headers: Record<string, string>;
  body: string;
}

/** What a delivery needs to make its request: its message (`payload`) and its endpoint now. */
export interface DeliveryToSend {
  /** `msg_…`: the webhook-id. */
  id: string;
  payload: string;
  url: string;
  format: WebhookFormat;
}

/**
 * The longest body kept with an attempt. Only Slack's are kept (Standard Webhooks bodies are the delivery's
 * payload itself), and those are a few hundred bytes: the limit only keeps an odd one from bloating the log.
 */
export const storedRequestBodyBytes = 64 * 1024;

/**
 * The body a delivery sends, the same on every attempt (it carries the event's time, not the attempt's):
 * the payload as it is, or for Slack the message made from it.
 */
export function requestBody(format: WebhookFormat, payload: string, publicUrl: string | undefined): string {
  if (format === "standard") return payload;
  const message = JSON.parse(payload) as { type: string; data: Record<string, unknown> };
  return JSON.stringify(slackMessage(message.type, message.data, publicUrl));
}

/**
 * The request of one attempt. `secret` is the endpoint's signing secret (`whsec_…`), needed for the standard
 * format; `sentAt` the real time of the attempt: receivers compare webhook-timestamp with their own clocks to
 * refuse replays, so it is not the server's clock (which tests move by hand).
 */
export function webhookRequest(
  delivery: DeliveryToSend,
  secret: string | undefined,
  publicUrl: string | undefined,
  sentAt: Date,
): WebhookRequest {
  const body = requestBody(delivery.format, delivery.payload, publicUrl);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Testbay-Webhooks",
  };
  // Slack checks no signature: the Standard Webhooks headers would mean nothing to it.
  if (delivery.format === "slack") return { url: delivery.url, headers, body };
  if (secret === undefined) throw new Error("the endpoint has no signing secret");
  headers["webhook-id"] = delivery.id;
  headers["webhook-timestamp"] = String(Math.floor(sentAt.getTime() / 1000));
  headers["webhook-signature"] = new Webhook(secret).sign(delivery.id, sentAt, body);
  return { url: delivery.url, headers, body };
}

/** The attempt's columns that keep its request (migration 0023): the body only when it is not the payload. */
export function storedRequest(
  request: WebhookRequest,
  payload: string,
): Pick<AttemptRow, "request_url" | "request_headers" | "request_body"> {
  return {
    request_url: request.url,
    request_headers: JSON.stringify(request.headers),
    request_body:
      request.body === payload
        ? null
        : Buffer.from(request.body).subarray(0, storedRequestBodyBytes).toString("utf8"),
  };
}

/** An attempt's request for the log; null for attempts from before migration 0023, and unsigned ones not sent. */
export function loggedRequest(
  attempt: Pick<AttemptRow, "request_url" | "request_headers">,
): { url: string; headers: Record<string, string> } | null {
  if (attempt.request_url === null) return null;
  return {
    url: attempt.request_url,
    headers: JSON.parse(attempt.request_headers ?? "{}") as Record<string, string>,
  };
}

/**
 * The body of a delivery for the log: what its last recorded attempt sent, or, before any, what it will send
 * (`planned`).
 */
export function loggedRequestBody(
  payload: string,
  attempts: ReadonlyArray<Pick<AttemptRow, "request_url" | "request_body">>,
  planned: () => string,
): string {
  const last = attempts.findLast((attempt) => attempt.request_url !== null);
  if (!last) return planned();
  return last.request_body ?? payload;
}
