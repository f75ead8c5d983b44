import { describe, expect, it } from "vitest";
import {
  attemptText,
  bodyExcerpt,
  deliveryStatusText,
  durationText,
  webhookStateText,
} from "./webhooks-format.ts";

const attempt = { at: "2026-11-24T10:00:00.000Z", response_body: null };

describe("webhooks in words", () => {
  it("says a disabled webhook's reason, and none when there is none", () => {
    expect(webhookStateText({ enabled: true, disabled_reason: null })).toBe("enabled");
    expect(
      webhookStateText({ enabled: false, disabled_reason: "msg_1 was not delivered in 11 attempts" }),
    ).toBe("disabled: msg_1 was not delivered in 11 attempts");
    expect(webhookStateText({ enabled: false, disabled_reason: null })).toBe("disabled");
  });

  it("says durations in ms under a second, in seconds above", () => {
    expect(durationText(0)).toBe("0 ms");
    expect(durationText(999)).toBe("999 ms");
    expect(durationText(10_004)).toBe("10.0 s");
  });

  it("says each attempt's answer or that none came, with its error", () => {
    expect(attemptText({ ...attempt, status_code: 200, duration_ms: 12, error: null })).toBe(
      "HTTP 200 in 12 ms",
    );
    expect(attemptText({ ...attempt, status_code: 500, duration_ms: 30, error: "HTTP 500" })).toBe(
      "HTTP 500 in 30 ms",
    );
    expect(
      attemptText({ ...attempt, status_code: null, duration_ms: 10_000, error: "timed out after 10 s" }),
    ).toBe("no answer in 10.0 s: timed out after 10 s");
    expect(attemptText({ ...attempt, status_code: null, duration_ms: 1, error: "address not allowed" })).toBe(
      "no answer in 1 ms: address not allowed",
    );
  });

  it("gives the start of an answer's body on one line", () => {
    expect(bodyExcerpt(null)).toBeUndefined();
    expect(bodyExcerpt("  \n ")).toBeUndefined();
    expect(bodyExcerpt('{"error":\n  "deploy gate restarting"}')).toBe('{"error": "deploy gate restarting"}');
    expect(bodyExcerpt("x".repeat(200), 10)).toBe(`${"x".repeat(9)}…`);
  });

  it("counts attempts in a delivery's status", () => {
    const one = { ...attempt, status_code: 200, duration_ms: 5, error: null };
    expect(deliveryStatusText({ status: "pending", attempts: [] })).toBe("pending");
    expect(deliveryStatusText({ status: "pending", attempts: [one] })).toBe("pending, 1 attempt so far");
    expect(deliveryStatusText({ status: "delivered", attempts: [one] })).toBe("delivered after 1 attempt");
    expect(deliveryStatusText({ status: "failed", attempts: [one, one, one] })).toBe(
      "failed after 3 attempts",
    );
  });
});
