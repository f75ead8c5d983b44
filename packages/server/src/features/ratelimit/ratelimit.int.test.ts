import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;

beforeAll(async () => {
  // Buckets kept in Redis (the scaled set) expire in real time while the test clock stands still: kept an hour
  // here, so that the counts these tests assert survive a loaded machine's slow requests (a CI run's flood of 80
  // wrong secrets took 16 s, and its bucket was gone after 6). Other suites keep the default, whose expiry refills
  // the buckets of clients that poll for a long while.
  server = await startTestServer({ rateLimitKeySlackMs: 3_600_000 });
});
afterAll(() => server.close());

/** A new client with a token, and a full bucket (the token call itself was charged to it). */
async function freshClient(role: "ci" | "agent" = "ci") {
  const credentials = await server.createClient("limits", role);
  const token = await server.token(credentials);
  server.clock.advance(60_000);
  return { credentials, headers: { "x-api-key": token } };
}

const me = (headers: Record<string, string>) => call(`${server.baseUrl}/me`, { headers });

describe("per-client rate limit: burst 20, 4 per second", () => {
  it("admits a burst of 20 and answers the 21st with 429 and a whole-second Retry-After", async () => {
    const { headers } = await freshClient();
    const remaining: number[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await me(headers);
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-policy")).toBe('"default";q=20;w=5');
      remaining.push(Number(/r=(\d+)/.exec(response.headers.get("ratelimit") ?? "")?.[1]));
    }
    expect(remaining).toEqual([...Array(20).keys()].reverse());

    const refused = await me(headers);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("ratelimit")).toBe('"default";r=0;t=1');
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ code: "rate_limited", status: 429, retryable: true });
    expect(refused.body.fix).toMatch(/backoff/);
  });

  it("admits the next request once a token has been regained (250 ms)", async () => {
    const { headers } = await freshClient();
    for (let i = 0; i < 20; i++) await me(headers);
    server.clock.advance(249);
    expect((await me(headers)).status).toBe(429);
    server.clock.advance(1);
    expect((await me(headers)).status).toBe(200);
  });

  it("converges on 4 requests per second for a client that keeps calling", async () => {
    const { headers } = await freshClient();
    let admitted = 0;
    // 10 requests per simulated second for 15 simulated seconds: the burst, then the sustained rate.
    for (let step = 0; step < 150; step++) {
      if ((await me(headers)).status === 200) admitted++;
      server.clock.advance(100);
    }
    const sustained = (admitted - 20) / 15;
    expect(sustained).toBeGreaterThanOrEqual(3.9);
    expect(sustained).toBeLessThanOrEqual(4.1);
  });

  it("counts token calls against the client they name", async () => {
    const { credentials, headers } = await freshClient();
    const body = {
      client_id: credentials.client_id,
      client_secret: credentials.client_secret,
      audience: "testbay",
    };
    for (let i = 0; i < 20; i++) {
      expect((await call(`${server.baseUrl}/oauth/token`, { json: body })).status).toBe(200);
    }
    const refused = await call(`${server.baseUrl}/oauth/token`, { json: body });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "rate_limited", error: "temporarily_unavailable" });
    // Same bucket: the client's API calls are refused too until it refills.
    expect((await me(headers)).status).toBe(429);
  });

  it("counts failed token calls in a bucket of their own: a flood of wrong secrets leaves the client answered", async () => {
    const { credentials, headers } = await freshClient();
    const tokenCall = (json: Record<string, string>) => call(`${server.baseUrl}/oauth/token`, { json });
    const statuses: number[] = [];
    // As probed in issue 25: 80 wrong secrets (and wrong audiences) naming a client ID anyone can read.
    for (let i = 0; i < 80; i++) {
      const wrong =
        i % 2 === 0
          ? { client_id: credentials.client_id, client_secret: "tbs_wrong", audience: "testbay" }
          : { client_id: credentials.client_id, client_secret: credentials.client_secret, audience: "other" };
      statuses.push((await tokenCall(wrong)).status);
    }
    // The flood is refused on its own count once 20 have failed ...
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(60).fill(429));
    const refused = await tokenCall({
      client_id: credentials.client_id,
      client_secret: "tbs_x",
      audience: "testbay",
    });
    expect(refused.body).toMatchObject({ code: "rate_limited", error: "temporarily_unavailable" });
    expect(refused.body.detail).toContain("failed token calls");
    // ... while the real client's bucket is untouched: its whole burst of requests is answered.
    for (let i = 0; i < 20; i++) expect((await me(headers)).status).toBe(200);
    expect((await me(headers)).status).toBe(429);
  });

  it("keeps each client's bucket its own", async () => {
    const a = await freshClient();
    const b = await freshClient();
    for (let i = 0; i < 20; i++) await me(a.headers);
    expect((await me(a.headers)).status).toBe(429);
    expect((await me(b.headers)).status).toBe(200);
  });

  it("gives agent clients their own, larger policy", async () => {
    const { headers } = await freshClient("agent");
    const response = await me(headers);
    expect(response.headers.get("ratelimit-policy")).toBe('"agent";q=200;w=4');
    let admitted = 1;
    while ((await me(headers)).status === 200 && admitted < 500) admitted++;
    expect(admitted).toBe(200);
  });

  it("does not rate limit health probes", async () => {
    for (let i = 0; i < 30; i++) expect((await call(`${server.origin}/healthz`)).status).toBe(200);
  });
});
