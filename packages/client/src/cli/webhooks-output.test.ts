import { describe, expect, it } from "vitest";
import type { Webhook, WebhookAttempt, WebhookDelivery } from "../sdk/models.ts";
import {
  deliveryTable,
  lastAnswer,
  shownBodyChars,
  webhookDetails,
  webhookFormat,
  webhookState,
} from "./webhooks-output.ts";

const webhook: Webhook = {
  id: "wh_1",
  url: "https://hooks.example.com/gate",
  events: ["execution.finished"],
  format: "standard",
  description: null,
  enabled: false,
  disabled_reason: "msg_1 was not delivered in 11 attempts",
  created_at: "2026-11-24T10:00:00.000Z",
};

const attempt = (
  status_code: number | null,
  error: string | null,
  url: string | null = "https://hooks.example.com/gate",
): WebhookAttempt => ({
  at: "2026-11-24T10:00:05.000Z",
  status_code,
  duration_ms: 12,
  error,
  response_body: null,
  request: url === null ? null : { url, headers: { "webhook-id": "msg_1" } },
});

const body = '{"type":"execution.finished","timestamp":"2026-11-24T10:00:00.000Z","data":{"id":"ex_1"}}';

const delivery = (
  attempts: WebhookDelivery["attempts"],
  status: WebhookDelivery["status"],
): WebhookDelivery => ({
  id: "msg_1",
  type: "execution.finished",
  webhook_id: "wh_1",
  status,
  created_at: "2026-11-24T10:00:00.000Z",
  next_attempt_at: status === "pending" ? "2026-11-24T10:00:35.000Z" : null,
  attempts,
  request_body: body,
});

describe("testbay webhooks output", () => {
  it("says why a webhook is disabled", () => {
    expect(webhookState(webhook)).toBe("disabled: msg_1 was not delivered in 11 attempts");
    expect(webhookState({ enabled: true, disabled_reason: null })).toBe("enabled");
  });

  it("says a delivery's last answer, or its error, once", () => {
    expect(lastAnswer(delivery([], "pending"))).toBe("-");
    expect(lastAnswer(delivery([attempt(500, "HTTP 500")], "pending"))).toBe("HTTP 500");
    expect(
      lastAnswer(delivery([attempt(500, "HTTP 500"), attempt(null, "address not allowed")], "failed")),
    ).toBe("no answer: address not allowed");
  });

  it("lists deliveries with their attempts and next attempt, and says how to send a test when there are none", () => {
    const rows = deliveryTable([delivery([attempt(500, "HTTP 500")], "pending")]).split("\n");
    expect(rows[0]).toMatch(
      /^DELIVERY\s+TYPE\s+STATUS\s+ATTEMPTS\s+LAST ATTEMPT\s+LAST ANSWER\s+NEXT ATTEMPT$/,
    );
    expect(rows[1]).toMatch(
      /^msg_1\s+execution\.finished\s+pending\s+1\s+2026-11-24T10:00:05\.000Z\s+HTTP 500\s+2026-11-24T10:00:35\.000Z$/,
    );
    expect(webhookDetails(webhook, [])).toContain("No deliveries yet: testbay webhooks test wh_1 sends");
  });

  it("shows each attempt's URL and what came back, and the body once", () => {
    const moved = delivery(
      [
        attempt(500, "HTTP 500"),
        { ...attempt(200, null, "https://hooks.example.com/gate-v2"), at: "2026-11-24T10:00:35.000Z" },
      ],
      "delivered",
    );
    const old = delivery([attempt(null, "no answer within the timeout", null)], "pending");
    const waiting = delivery([], "pending");
    const long = {
      ...delivery([attempt(200, null)], "delivered"),
      request_body: `{"data":"${"é".repeat(300)}"}`,
    };
    const text = webhookDetails(webhook, [moved, old, waiting, long]);
    const requests = text.slice(text.indexOf("Requests, newest first"));
    expect(requests).toBe(
      [
        "Requests, newest first (headers and whole bodies: --json):",
        "msg_1  execution.finished  delivered",
        "  1. 2026-11-24T10:00:05.000Z  POST https://hooks.example.com/gate  → HTTP 500 in 12 ms",
        "  2. 2026-11-24T10:00:35.000Z  POST https://hooks.example.com/gate-v2  → HTTP 200 in 12 ms",
        `  body (${body.length} bytes): ${body}`,
        "",
        "msg_1  execution.finished  pending",
        "  1. 2026-11-24T10:00:05.000Z  (request not kept: sent before the server kept them)  → no answer: no answer within the timeout in 12 ms",
        `  body (${body.length} bytes): ${body}`,
        "",
        "msg_1  execution.finished  pending",
        "  not sent yet: due 2026-11-24T10:00:35.000Z",
        `  body to send (${body.length} bytes): ${body}`,
        "",
        "msg_1  execution.finished  delivered",
        "  1. 2026-11-24T10:00:05.000Z  POST https://hooks.example.com/gate  → HTTP 200 in 12 ms",
        `  body (611 bytes): {"data":"${"é".repeat(shownBodyChars - 9)}…`,
        "",
      ].join("\n"),
    );
    expect(text.split(body)).toHaveLength(4);
  });

  it("takes standard or slack as --format, nothing else", () => {
    expect(webhookFormat(undefined)).toBeUndefined();
    expect(webhookFormat("slack")).toBe("slack");
    expect(() => webhookFormat("teams")).toThrow("--format teams: say standard or slack.");
  });
});
