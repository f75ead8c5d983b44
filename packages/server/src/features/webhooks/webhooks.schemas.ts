import { Type } from "typebox";
import { PageQuery } from "../../http/pagination.ts";
import { subscribableEvents } from "./event-types.ts";
import { loggedRequest, loggedRequestBody, storedRequestBodyBytes } from "./webhook-request.ts";
import type { AttemptRow, DeliveryWithAttempts, WebhookRecord } from "./webhooks.repo.ts";

const eventsDescription = `Event types to deliver: ${subscribableEvents.join(", ")}. Anything else is refused with 400 invalid_request. Deliveries may arrive out of order (a retry, two instances sending): execution.started and execution.finished carry data.sequence, an integer that grows with each event of that execution (started before finished), so a receiver keeps the one with the highest.`;

export const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    "An http(s) URL. Loopback, private, link-local and unspecified address literals and localhost are refused (400) unless the server runs with TESTBAY_WEBHOOK_ALLOW_PRIVATE=true; names are checked when they are resolved, at every attempt.",
  examples: ["https://hooks.example.com/testbay"],
});

const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 20,
  description: eventsDescription,
});

const Description = Type.String({ maxLength: 500, description: "What it is for, shown beside it" });

export const CreateWebhookBody = Type.Object(
  {
    url: WebhookUrl,
    events: Events,
    description: Type.Optional(Description),
    format: Type.Optional(
      Type.Union([Type.Literal("standard"), Type.Literal("slack")], {
        description:
          "standard (default): signed per Standard Webhooks, body {type, timestamp, data}. slack: a Slack incoming-webhook body {text, blocks}, unsigned.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({ description: "true also clears disabled_reason (after fixing the receiver)" }),
    ),
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(Events),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
  },
  { additionalProperties: false },
);

export const WebhookView = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  format: Type.Union([Type.Literal("standard"), Type.Literal("slack")]),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()], {
    description: "Why the server disabled it (its retry schedule was spent); null when enabled",
  }),
  created_at: Type.String({ format: "date-time" }),
});

export const CreatedWebhookView = Type.Object({
  ...WebhookView.properties,
  secret: Type.Optional(
    Type.String({
      description:
        "The signing secret (whsec_…), shown this once: verify deliveries with it (Standard Webhooks libraries take it as is). Absent for slack.",
    }),
  ),
});

export const RotatedSecretView = Type.Object({
  ...WebhookView.properties,
  secret: Type.String({
    description: "The new signing secret (whsec_…), shown this once; the old one stops at once.",
  }),
});

export const WebhookList = Type.Object({
  items: Type.Array(WebhookView),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const WebhookParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  delivery_id: Type.String({ minLength: 1, maxLength: 64 }),
});

export const ListQuery = Type.Object(PageQuery, { additionalProperties: false });

export const DeliveryAccepted = Type.Object({
  delivery_id: Type.String({ description: "The message id: the webhook-id header of every attempt" }),
});

const AttemptView = Type.Object({
  at: Type.String({ format: "date-time" }),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: "null when no answer came" }),
  duration_ms: Type.Integer({ minimum: 0 }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'null on success; "address not allowed" when the address guard stopped it',
  }),
  response_body: Type.Union([Type.String(), Type.Null()], {
    description: "The first KiB of the answer's body",
  }),
  request: Type.Union(
    [
      Type.Object({
        url: Type.String({
          description: "Where this attempt went (the webhook's URL then: it may be changed between attempts)",
        }),
        headers: Type.Record(Type.String(), Type.String(), {
          description:
            "Every header Testbay set, lower-case names: content-type, user-agent, and for the standard format webhook-id, webhook-timestamp (this attempt's) and webhook-signature (an HMAC of this one message, not the secret). The HTTP client adds host, content-length and connection.",
        }),
      }),
      Type.Null(),
    ],
    {
      description:
        "The request this attempt sent, also when no answer came (timeout, refused connection, address guard); null for attempts made before the server kept requests, and for a message it could not sign (error: not sent …)",
    },
  ),
});

export const DeliveryView = Type.Object({
  id: Type.String({ description: "msg_…: the webhook-id header, the same on every attempt and redeliver" }),
  type: Type.String(),
  webhook_id: Type.String(),
  status: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")]),
  created_at: Type.String({ format: "date-time" }),
  next_attempt_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "When it is tried next; null once delivered or failed",
  }),
  attempts: Type.Array(AttemptView),
  request_body: Type.String({
    description: `The body sent, the same on every attempt (it carries the event's time, not the attempt's): what the last attempt sent, or before the first what will be sent. For the standard format the Standard Webhooks body {type, timestamp, data} as signed; for slack the Slack message, kept up to ${storedRequestBodyBytes / 1024} KiB per attempt.`,
  }),
});

export const DeliveryList = Type.Object({
  items: Type.Array(DeliveryView),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const webhookView = (webhook: WebhookRecord) => ({
  id: webhook.id,
  url: webhook.url,
  events: webhook.events,
  format: webhook.format,
  description: webhook.description,
  enabled: webhook.enabled,
  disabled_reason: webhook.disabledReason,
  created_at: webhook.createdAt,
});

const attemptView = (attempt: AttemptRow) => ({
  at: attempt.at,
  status_code: attempt.status_code,
  duration_ms: attempt.duration_ms,
  error: attempt.error,
  response_body: attempt.response_excerpt,
  request: loggedRequest(attempt),
});

/** A message of the log; `plannedBody` is what it will send (for one not tried yet: requestBody). */
export const deliveryView = (delivery: DeliveryWithAttempts, plannedBody: () => string) => ({
  id: delivery.id,
  type: delivery.type,
  webhook_id: delivery.webhook_id,
  status: delivery.status,
  created_at: delivery.created_at,
  next_attempt_at: delivery.status === "pending" ? delivery.next_attempt_at : null,
  attempts: delivery.attemptLog.map(attemptView),
  request_body: loggedRequestBody(delivery.payload, delivery.attemptLog, plannedBody),
});
