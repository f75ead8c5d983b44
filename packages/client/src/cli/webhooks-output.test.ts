import { describe, expect, it } from "vitest";
import type { Webhook, WebhookDelivery } from "../sdk/models.ts";
import { deliveryTable, lastAnswer, webhookDetails, webhookFormat, webhookState } from "./webhooks-output.ts";

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

const attempt = (status_code: number | null, error: string | null) => ({
  at: "2026-11-24T10:00:05.000Z",
  status_code,
  duration_ms: 12,
  error,
  response_body: null,
});

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

  it("takes standard or slack as --format, nothing else", () => {
    expect(webhookFormat(undefined)).toBeUndefined();
    expect(webhookFormat("slack")).toBe("slack");
    expect(() => webhookFormat("teams")).toThrow("--format teams: say standard or slack.");
  });
});
