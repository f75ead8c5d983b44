import { describe, expect, it } from "vitest";
import {
  attemptText,
  bodyExcerpt,
  deliveryStatusText,
  durationText,
  prettyBody,
  problemField,
  webhookChanges,
  webhookHealth,
  webhookStateText,
} from "./webhooks-format.ts";

const attempt = { at: "2026-11-24T10:00:00.000Z", response_body: null, request: null };

describe("webhooks in words", () => {
  it("says a disabled webhook's reason, and none when there is none", () => {
    expect(webhookStateText({ enabled: true, disabled_reason: null })).toBe("enabled");
    expect(
      webhookStateText({ enabled: false, disabled_reason: "msg_1 was not delivered in 11 attempts" }),
    ).toBe("disabled: msg_1 was not delivered in 11 attempts");
    expect(webhookStateText({ enabled: false, disabled_reason: null })).toBe("disabled");
  });

  it("says a webhook is failing when its newest tried messages failed: how many, the last error, the next try", () => {
    const refused = (at: string, body: string | null = null) => ({
      ...attempt,
      at,
      status_code: 500,
      duration_ms: 9,
      error: "HTTP 500",
      response_body: body,
    });
    const delivered = { ...attempt, status_code: 204, duration_ms: 4, error: null };
    const on = { enabled: true, disabled_reason: null };
    const log = [
      // Queued, not tried yet: it says nothing of the receiver.
      { status: "pending" as const, attempts: [], next_attempt_at: null },
      {
        status: "pending" as const,
        attempts: [refused("2026-11-24T10:03:00.000Z", "  deploy gate\n restarting ")],
        next_attempt_at: "2026-11-24T10:03:30.000Z",
      },
      { status: "failed" as const, attempts: [refused("2026-11-24T10:02:00.000Z")], next_attempt_at: null },
      {
        status: "delivered" as const,
        attempts: [refused("2026-11-24T10:00:00.000Z"), delivered],
        next_attempt_at: null,
      },
      { status: "failed" as const, attempts: [refused("2026-11-24T09:00:00.000Z")], next_attempt_at: null },
    ];
    expect(webhookHealth(on, log)).toEqual({
      state: "failing",
      label: "failing",
      failed: 2,
      lastError: 'HTTP 500 "deploy gate restarting"',
      lastErrorAt: "2026-11-24T10:03:00.000Z",
      nextAttemptAt: "2026-11-24T10:03:30.000Z",
    });
    // Every message failed, none retrying: all of them count, and there is no next try.
    expect(webhookHealth(on, log.slice(2, 3))).toMatchObject({ failed: 1, nextAttemptAt: null });
    // The latest attempt was delivered: enabled, whatever failed before it.
    expect(webhookHealth(on, log.slice(3))).toEqual({ state: "enabled", label: "enabled" });
    // Taken by their latest attempt, not their place in the log: an old message redelivered just now counts first.
    const redelivered = {
      status: "delivered" as const,
      attempts: [refused("2026-11-24T08:00:00.000Z"), { ...delivered, at: "2026-11-24T10:05:00.000Z" }],
      next_attempt_at: null,
    };
    expect(webhookHealth(on, [...log, redelivered])).toEqual({ state: "enabled", label: "enabled" });
    expect(webhookHealth(on, [])).toEqual({ state: "enabled", label: "enabled" });
    expect(webhookHealth(on, undefined)).toEqual({ state: "enabled", label: "enabled" });
    // A webhook the server disabled says so, with its reason, whatever its log holds.
    expect(
      webhookHealth({ enabled: false, disabled_reason: "msg_1 was not delivered in 11 attempts" }, log),
    ).toEqual({
      state: "disabled",
      label: "disabled: msg_1 was not delivered in 11 attempts",
    });
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

  it("indents a JSON body, and leaves anything else as it was sent", () => {
    expect(prettyBody('{"type":"webhook.test","data":{"webhook_id":"wh_1"}}')).toBe(
      '{\n  "type": "webhook.test",\n  "data": {\n    "webhook_id": "wh_1"\n  }\n}',
    );
    expect(prettyBody("payload=%7B%22text%22%7D")).toBe("payload=%7B%22text%22%7D");
    expect(prettyBody('{"cut off at a KiB":')).toBe('{"cut off at a KiB":');
    expect(prettyBody("")).toBe("");
  });

  it("finds the form field a refusal is about, or none", () => {
    expect(problemField([{ path: "/url", in: "body", message: "is not allowed: 10.0.0.1 is private" }])).toBe(
      "url",
    );
    expect(problemField([{ path: "/events/2", message: "is not one of …" }])).toBe("events");
    expect(problemField([{ path: "/events", message: "must NOT have fewer than 1 items" }])).toBe("events");
    expect(problemField([{ path: "/description", message: "must NOT have more than 500 characters" }])).toBe(
      "description",
    );
    expect(problemField([{ path: "/", message: "is empty" }, { path: "/url" }])).toBe("url");
    expect(problemField([{ path: "/format", message: "is not a known field" }])).toBeUndefined();
    expect(problemField(undefined)).toBeUndefined();
    expect(problemField("not a list")).toBeUndefined();
    expect(problemField([null, { path: 3 }])).toBeUndefined();
  });

  it("sends only what an edit changed", () => {
    const webhook = {
      url: "https://hooks.example.com/testbay",
      events: ["execution.started", "execution.finished"],
      description: "deploy gate",
    };
    const same = { url: webhook.url, events: webhook.events, description: "deploy gate" };
    expect(webhookChanges(webhook, same)).toEqual({});
    // Ticked in another order, padded with spaces: no change.
    expect(
      webhookChanges(webhook, {
        url: ` ${webhook.url} `,
        events: ["execution.finished", "execution.started"],
        description: " deploy gate ",
      }),
    ).toEqual({});
    expect(webhookChanges(webhook, { ...same, url: "https://gate.example.com/hook" })).toEqual({
      url: "https://gate.example.com/hook",
    });
    expect(webhookChanges(webhook, { ...same, events: ["execution.finished"] })).toEqual({
      events: ["execution.finished"],
    });
    expect(
      webhookChanges(webhook, {
        ...same,
        events: ["execution.started", "execution.finished", "version.uploaded"],
      }),
    ).toEqual({ events: ["execution.started", "execution.finished", "version.uploaded"] });
    // Emptied: removed (null), which PATCH takes.
    expect(webhookChanges(webhook, { ...same, description: "  " })).toEqual({ description: null });
    expect(webhookChanges({ ...webhook, description: null }, { ...same, description: "" })).toEqual({});
    expect(webhookChanges({ ...webhook, description: null }, same)).toEqual({ description: "deploy gate" });
  });
});
