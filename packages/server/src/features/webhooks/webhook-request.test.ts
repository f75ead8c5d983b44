import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import {
  loggedRequest,
  loggedRequestBody,
  storedRequest,
  storedRequestBodyBytes,
  webhookRequest,
} from "./webhook-request.ts";

const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const payload = JSON.stringify({ type: "webhook.test", timestamp: "2026-11-24T10:00:00.000Z", data: {} });
const delivery = { id: "msg_1", payload, url: "https://hooks.example.com/a", format: "standard" as const };

describe("a webhook attempt's request", () => {
  it("is signed over the payload it sends, with the headers the log keeps", () => {
    const sentAt = new Date("2026-11-24T10:00:07.500Z");
    const request = webhookRequest(delivery, secret, undefined, sentAt);
    expect(request.body).toBe(payload);
    expect(request.headers).toEqual({
      "content-type": "application/json",
      "user-agent": "Testbay-Webhooks",
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Date.parse("2026-11-24T10:00:07Z") / 1000),
      "webhook-signature": expect.stringMatching(/^v1,/),
    });
    // What a receiver checks, at that time (it refuses old timestamps).
    vi.useFakeTimers({ now: sentAt, toFake: ["Date"] });
    try {
      expect(new Webhook(secret).verify(request.body, request.headers)).toEqual(JSON.parse(payload));
    } finally {
      vi.useRealTimers();
    }
    expect(() => webhookRequest(delivery, undefined, undefined, sentAt)).toThrow("no signing secret");
  });

  it("keeps the body only when it is not the payload, and at most 64 KiB of it", () => {
    const standard = webhookRequest(delivery, secret, undefined, new Date());
    expect(storedRequest(standard, payload)).toEqual({
      request_url: "https://hooks.example.com/a",
      request_headers: JSON.stringify(standard.headers),
      request_body: null,
    });
    const slack = webhookRequest({ ...delivery, format: "slack" }, undefined, undefined, new Date());
    expect(slack.headers).toEqual({ "content-type": "application/json", "user-agent": "Testbay-Webhooks" });
    expect(storedRequest(slack, payload).request_body).toBe(slack.body);
    const huge = { ...slack, body: "x".repeat(storedRequestBodyBytes + 10) };
    expect(storedRequest(huge, payload).request_body).toHaveLength(storedRequestBodyBytes);
  });

  it("shows attempts from before requests were kept as null, and the last kept body or else the planned one", () => {
    const old = { request_url: null, request_headers: null, request_body: null };
    const kept = { request_url: "https://hooks.example.com/b", request_headers: '{"webhook-id":"msg_1"}' };
    expect(loggedRequest(old)).toBeNull();
    expect(loggedRequest(kept)).toEqual({
      url: "https://hooks.example.com/b",
      headers: { "webhook-id": "msg_1" },
    });

    const planned = () => "planned";
    expect(loggedRequestBody(payload, [], planned)).toBe("planned");
    expect(loggedRequestBody(payload, [old], planned)).toBe("planned");
    expect(loggedRequestBody(payload, [{ ...kept, request_body: null }, old], planned)).toBe(payload);
    expect(
      loggedRequestBody(
        payload,
        [
          { ...kept, request_body: "first" },
          { ...kept, request_body: "second" },
        ],
        planned,
      ),
    ).toBe("second");
  });
});
