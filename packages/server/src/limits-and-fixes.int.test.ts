import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../test/harness.ts";
import { RawConnection } from "../test/raw-http.ts";

// Limits other than the defaults, so a text that quotes a fixed value instead of the configured one fails.
const maxUploadBytes = 3 * 1024 * 1024;
let server: TestServer;
let ci: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_MAX_UPLOAD_BYTES: String(maxUploadBytes),
      TESTBAY_RATE_LIMIT_BURST: "1000",
      TESTBAY_RATE_LIMIT_PER_SECOND: "7.5",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "333",
      TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: "44",
    },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

/** An upload's answer from its headers alone: no body byte is sent, so the answer cannot depend on one. */
async function uploadHeadersOnly(pkg: string, version: string, contentLength: number) {
  const connection = await RawConnection.open(server.origin);
  connection.send(
    `PUT /v1/apps/${pkg}/versions/${version} HTTP/1.1\r\nHost: x\r\nx-api-key: ${ci["x-api-key"]}\r\n` +
      `Content-Type: application/octet-stream\r\nContent-Length: ${contentLength}\r\nExpect: 100-continue\r\n\r\n`,
  );
  const response = await connection.finalResponse();
  connection.destroy();
  return response;
}

describe("GET /v1/me", () => {
  it("carries the configured limits of the caller's role", async () => {
    const me = await call(`${server.baseUrl}/me`, { headers: ci });
    expect(me.status).toBe(200);
    expect(me.body.limits).toEqual({
      max_upload_bytes: maxUploadBytes,
      rate_limit: { burst: 1000, per_second: 7.5 },
    });
    // The same numbers the RateLimit-Policy header announces.
    expect(me.headers.get("ratelimit-policy")).toContain("q=1000");

    const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
    const agentMe = await call(`${server.baseUrl}/me`, { headers: agent });
    expect(agentMe.body.limits).toEqual({
      max_upload_bytes: maxUploadBytes,
      rate_limit: { burst: 333, per_second: 44 },
    });
  });
});

describe("fix texts name the HTTP call and the testbay command, with the request's names", () => {
  it("404 app_not_found on upload", async () => {
    const response = await uploadHeadersOnly("com.x.unknown", "2.0", 1000);
    expect(response.status).toBe(404);
    expect(response.json.code).toBe("app_not_found");
    expect(response.json.fix).toContain("testbay apps create --app com.x.unknown --platform android|ios");
    expect(response.json.fix).toContain("POST /v1/apps");
    expect(response.json.fix).toContain('"package_name":"com.x.unknown"');
    expect(response.json.fix).not.toMatch(/[{]package_name[}]|[{]version[}]/);
  });

  it("409 app_version_exists on upload says to bump the version", async () => {
    const response = await uploadHeadersOnly("com.example.basic", "1.2.3", 1000);
    expect(response.status).toBe(409);
    expect(response.json.fix).toContain("testbay upload --app com.example.basic --version NEW_VERSION");
    expect(response.json.fix).toContain("HEAD /v1/apps/com.example.basic/versions/1.2.3");
  });

  it("413 quotes the configured limit, not a fixed one", async () => {
    const response = await uploadHeadersOnly("com.example.basic", "big", maxUploadBytes + 1);
    expect(response.status).toBe(413);
    expect(response.json.limit_bytes).toBe(maxUploadBytes);
    expect(response.json.detail).toContain(`${maxUploadBytes} bytes (3 MiB)`);
    expect(response.json.detail).not.toContain("500 MiB");
  });

  it("404 test_package_not_found and app_version_not_found", async () => {
    const tests = await call(`${server.baseUrl}/apps/com.example.basic/versions/1.2.3/test-package`, {
      headers: ci,
    });
    expect(tests.status).toBe(404);
    expect(tests.body.fix).toContain(
      "testbay upload --app com.example.basic --version 1.2.3 --file BUILD --test-file PATH",
    );
    expect(tests.body.fix).toContain("PUT /v1/apps/com.example.basic/versions/1.2.3/test-package");

    const version = await call(`${server.baseUrl}/apps/com.example.basic/versions/7.7`, { headers: ci });
    expect(version.status).toBe(404);
    expect(version.body.fix).toContain("testbay upload --app com.example.basic --version 7.7 --file PATH");
  });
});
