import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

// API.md §10: behind a TLS proxy the session cookie is Secure only with an https TESTBAY_PUBLIC_URL; a
// request that says it came over HTTPS to a server without one logs a warning naming the setting, once.

const warnings = (server: TestServer) =>
  server.logs
    .map((line) => JSON.parse(line) as { level: number; msg: string; setting?: string })
    .filter((line) => line.level === 40 && line.setting === "TESTBAY_PUBLIC_URL");

describe("a request through an HTTPS proxy (X-Forwarded-Proto: https)", () => {
  let plain: TestServer;
  let https: TestServer;
  beforeAll(async () => {
    plain = await startTestServer();
    https = await startTestServer({ env: { TESTBAY_PUBLIC_URL: "https://testbay.example.com/v1" } });
  });
  afterAll(async () => {
    await plain.close();
    await https.close();
  });

  it("to a server without an https TESTBAY_PUBLIC_URL logs a warning that names it, once", async () => {
    expect(warnings(plain)).toEqual([]);
    // Once per instance (the scaled configuration runs two, writing to one log).
    for (const instance of plain.instances) {
      for (let i = 0; i < 3; i++) {
        const response = await call(`${instance.origin}/auth/session`, {
          headers: { "x-forwarded-proto": "https" },
        });
        expect(response.status).toBe(200);
      }
    }
    const logged = warnings(plain);
    expect(logged).toHaveLength(plain.instances.length);
    expect(logged[0]?.msg).toMatch(/X-Forwarded-Proto: https.*set TESTBAY_PUBLIC_URL to the https:\/\/ URL/);
  });

  it("to a server with an https TESTBAY_PUBLIC_URL logs nothing", async () => {
    await call(`${https.origin}/auth/session`, { headers: { "x-forwarded-proto": "https" } });
    expect(warnings(https)).toEqual([]);
  });
});

describe("TESTBAY_TRUSTED_PROXIES without an https TESTBAY_PUBLIC_URL", () => {
  let proxied: TestServer;
  beforeAll(async () => {
    proxied = await startTestServer({ env: { TESTBAY_TRUSTED_PROXIES: "127.0.0.1" } });
  });
  afterAll(() => proxied.close());

  it("is warned of at start", () => {
    const logged = warnings(proxied);
    expect(logged.length).toBeGreaterThanOrEqual(1);
    expect(logged[0]?.msg).toMatch(
      /^TESTBAY_TRUSTED_PROXIES names proxies, but TESTBAY_PUBLIC_URL is not an https URL/,
    );
  });
});
