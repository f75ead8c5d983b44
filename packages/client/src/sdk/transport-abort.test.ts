import { describe, expect, it } from "vitest";
import { Testbay } from "./client.ts";
import { FakeClock, HeldClock } from "./clock.ts";
import { TestbayGaveUpError } from "./errors.ts";

/**
 * A stopping agent aborts its claim (packages/agent/src/runtime/agent.ts `stop()`). The abort must end the
 * whole call, not only the fetch in flight: a server that is shutting down answers 503 "closing", and a call
 * that kept retrying it held the agent, and so the server's own shutdown, for seconds.
 */

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
// What Fastify answers while it closes (return503OnClosing, packages/server/src/http/create-server.ts).
const closing = () =>
  json(503, { error: "Service Unavailable", message: "Service Unavailable", statusCode: 503 });
const token = (access_token: string) =>
  json(200, { access_token, token_type: "api-key", expires_in: 86_400, expires_at: "2026-01-02T00:00:00Z" });

/** A fetch that records each request's "METHOD /path" and its x-api-key, and answers through `answer`. */
function recordingFetch(answer: (key: string) => Promise<Response>) {
  const sent: { key: string; apiKey: string | undefined }[] = [];
  const fetch = async (input: string, init: RequestInit) => {
    const key = `${init.method ?? "GET"} ${new URL(input).pathname.replace(/^\/v1/, "")}`;
    sent.push({ key, apiKey: (init.headers as Record<string, string>)["x-api-key"] });
    return answer(key);
  };
  return { fetch, count: (key: string) => sent.filter((s) => s.key === key).length, sent };
}

const claimRequest = { agent_id: "agent-1", devices: [], wait_seconds: 30 };

describe("a call's signal ends the whole call", () => {
  it("a claim aborted during the backoff after a 503 rejects with the abort and sends nothing more", async () => {
    const fake = recordingFetch(async () => closing());
    const clock = new HeldClock();
    const testbay = new Testbay({
      baseUrl: "http://testbay.invalid/v1",
      token: "agent-token",
      fetch: fake.fetch,
      clock,
      random: () => 0.5,
    });
    const controller = new AbortController();
    const claim = testbay.agent.claim(claimRequest, controller.signal);
    await clock.held();
    expect(fake.count("POST /agent/claim")).toBe(1);
    controller.abort();
    const error = await claim.catch((e) => e);
    expect(error).toBe(controller.signal.reason);
    expect(error).toMatchObject({ name: "AbortError" });
    clock.release();
    await Promise.resolve();
    expect(fake.count("POST /agent/claim")).toBe(1);
    expect(clock.sleeps).toEqual([250]);
    expect(testbay.transport.stats).toMatchObject({ requests: 1, retries: 0 });
  });

  it("a 503 that arrives as the signal fires ends the call with the abort, not TestbayGaveUpError", async () => {
    const controller = new AbortController();
    const fake = recordingFetch(async () => {
      controller.abort();
      return closing();
    });
    const clock = new FakeClock();
    const testbay = new Testbay({
      baseUrl: "http://testbay.invalid/v1",
      token: "agent-token",
      fetch: fake.fetch,
      clock,
      retry: { maxAttempts: 1 },
    });
    const error = await testbay.agent.claim(claimRequest, controller.signal).catch((e) => e);
    expect(error).not.toBeInstanceOf(TestbayGaveUpError);
    expect(error).toBe(controller.signal.reason);
    expect(fake.count("POST /agent/claim")).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("a call aborted while the token is on its way rejects with the abort; another call still gets the token", async () => {
    let issue: (response: Response) => void = () => {};
    let tokenAsked: () => void = () => {};
    const asked = new Promise<void>((resolve) => {
      tokenAsked = resolve;
    });
    const fake = recordingFetch((key) => {
      if (key === "POST /oauth/token") {
        tokenAsked();
        return new Promise<Response>((resolve) => {
          issue = resolve;
        });
      }
      if (key === "GET /me") return Promise.resolve(json(200, { client_id: "cl_1" }));
      return Promise.resolve(json(204, {}));
    });
    const testbay = new Testbay({
      baseUrl: "http://testbay.invalid/v1",
      clientId: "cl_1",
      clientSecret: "secret",
      fetch: fake.fetch,
      clock: new FakeClock(),
    });
    const controller = new AbortController();
    const claim = testbay.agent.claim(claimRequest, controller.signal);
    const me = testbay.me();
    await asked;
    const reason = new Error("agent stopping");
    controller.abort(reason);
    await expect(claim).rejects.toBe(reason);

    issue(token("tok"));
    await expect(me).resolves.toMatchObject({ client_id: "cl_1" });
    expect(fake.count("POST /oauth/token")).toBe(1);
    expect(fake.count("POST /agent/claim")).toBe(0);
    expect(fake.sent.find((s) => s.key === "GET /me")?.apiKey).toBe("tok");
  });
});
