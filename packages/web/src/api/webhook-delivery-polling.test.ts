import { describe, expect, it } from "vitest";
import { deliveryPollMs } from "./webhook-delivery-polling.ts";
import type { WebhookDelivery } from "./webhooks.ts";

const now = Date.parse("2026-11-24T10:00:00.000Z");
const attempt = {
  at: "2026-11-24T09:59:59.000Z",
  status_code: 500,
  duration_ms: 20,
  error: "HTTP 500",
  response_body: null,
  request: null,
};

function delivery(
  status: WebhookDelivery["status"],
  next: string | null,
  attempts = [attempt],
): WebhookDelivery {
  return {
    id: "msg_1",
    type: "webhook.test",
    webhook_id: "wh_1",
    status,
    created_at: "2026-11-24T09:59:58.000Z",
    next_attempt_at: next,
    attempts,
    request_body: '{"type":"webhook.test"}',
  };
}

describe("reading a delivery log again", () => {
  it("stops once nothing is pending", () => {
    expect(deliveryPollMs(undefined, now)).toBe(false);
    expect(deliveryPollMs([delivery("delivered", null), delivery("failed", null)], now)).toBe(false);
  });

  it("reads every second while a message is queued or its next attempt is due within 10 s", () => {
    expect(deliveryPollMs([delivery("pending", "2026-11-24T10:00:00.000Z", [])], now)).toBe(1000);
    expect(deliveryPollMs([delivery("pending", "2026-11-24T10:00:05.000Z")], now)).toBe(1000);
    expect(deliveryPollMs([delivery("pending", "2026-11-24T09:59:00.000Z")], now)).toBe(1000);
  });

  it("reads every 30 s while the only retries wait longer", () => {
    expect(
      deliveryPollMs([delivery("pending", "2026-11-24T10:30:00.000Z"), delivery("delivered", null)], now),
    ).toBe(30_000);
  });
});
