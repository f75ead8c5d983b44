import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { signInSlowedDown } from "./sign-in-slowdown.fixture.ts";

// API.md §10: the caller's address, which sign-in failures (and failed token calls, §1) are counted against,
// comes from X-Forwarded-For only behind the proxies named in TESTBAY_TRUSTED_PROXIES. The tests' proxy is
// the test itself, at 127.0.0.1.

/** Sign-in calls are public, limited per address like any (20 at once, 4 a second): keep under that. */
const keepUnderRequestLimit = (server: TestServer) => server.clock.advance(250);

async function failSignIns(server: TestServer, count: number, forwardedFor: string) {
  for (let i = 0; i < count; i++) {
    keepUnderRequestLimit(server);
    const response = await call(`${server.origin}/auth/login`, {
      json: { email: `guess-${i}@acme.example`, password: "wrong password" },
      headers: { "x-forwarded-for": forwardedFor },
    });
    expect(response.status).toBe(401);
  }
}

describe("without TESTBAY_TRUSTED_PROXIES", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it("ignores X-Forwarded-For: failures claiming many addresses all count against the connection's", async () => {
    for (let i = 0; i < 30; i++) {
      keepUnderRequestLimit(server);
      const response = await call(`${server.origin}/auth/login`, {
        json: { email: `guess-${i}@acme.example`, password: "wrong password" },
        headers: { "x-forwarded-for": `203.0.113.${i + 1}` },
      });
      expect(response.status).toBe(401);
    }
    const slowed = await signInSlowedDown(server, "someone@acme.example", "wrong password", {
      "x-forwarded-for": "198.51.100.1",
    });
    expect(slowed.address).toBe("127.0.0.1");
    expect(slowed.delayMs).toBe(1000);
    expect(slowed.response.status).toBe(401);
  });
});

describe("with TESTBAY_TRUSTED_PROXIES", () => {
  let server: TestServer;
  let password: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { TESTBAY_TRUSTED_PROXIES: "127.0.0.1,::1" } });
    await server.createClient("acme", "ci");
    password = (
      await server.app.services.people.createUser({ email: "ann@acme.example", role: "viewer", org: "acme" })
    ).password;
  });
  afterAll(() => server.close());

  it("counts sign-in failures against the address X-Forwarded-For names", async () => {
    await failSignIns(server, 30, "203.0.113.7");
    // From the address that failed: slowed down, then signed in all the same.
    const slowed = await signInSlowedDown(server, "ann@acme.example", password, {
      "x-forwarded-for": "203.0.113.7",
    });
    expect(slowed.address).toBe("203.0.113.7");
    expect(slowed.response.status).toBe(200);
    // From another address behind the same proxy: at once.
    const other = await call(`${server.origin}/auth/login`, {
      json: { email: "ann@acme.example", password },
      headers: { "x-forwarded-for": "198.51.100.1" },
    });
    expect(other.status).toBe(200);
  });

  it("counts failed token calls against the address X-Forwarded-For names", async () => {
    const client = await server.createClient("acme", "ci");
    const tokenCall = (secret: string, forwardedFor: string) =>
      call(`${server.baseUrl}/oauth/token`, {
        json: { client_id: client.client_id, client_secret: secret, audience: "testbay" },
        headers: { "x-forwarded-for": forwardedFor },
      });
    const flood: number[] = [];
    for (let i = 0; i < 30; i++) flood.push((await tokenCall("tbs_wrong", "203.0.113.9")).status);
    expect(flood.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(flood.slice(20)).toEqual(Array(10).fill(429));
    // The real client, elsewhere, still gets its token.
    expect((await tokenCall(client.client_secret, "198.51.100.2")).status).toBe(200);
  });
});
