import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../test/harness.ts";
import { RawConnection } from "../../test/raw-http.ts";

/**
 * Bodies Fastify reads itself (JSON, forms) are cut when they stall, like streamed uploads
 * (versions/upload/stalled-body.int.test.ts); a connection kept alive between requests is not.
 */

let server: TestServer;
let ci: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_BODY_IDLE_TIMEOUT_SECONDS: "1", TESTBAY_RATE_LIMIT_BURST: "10000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
});
afterAll(() => server.close());

function request(method: string, path: string, headers: Record<string, string>, body = ""): string {
  const head = Object.entries({ host: "x", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return `${method} ${path} HTTP/1.1\r\n${head}\r\n${body}`;
}

describe("a stalled JSON or form body", () => {
  it("is answered 408 request_timeout and the connection closed", async () => {
    const connection = await RawConnection.open(server.origin);
    connection.send(
      request("POST", "/v1/testplans", {
        ...ci,
        "content-type": "application/json",
        "content-length": "200",
      }),
    );
    connection.send('{"name": "half a pl');
    const response = await connection.finalResponse(10_000);
    expect(response.status).toBe(408);
    expect(response.headers).toMatch(/\r\nconnection: close/i);
    expect(response.headers).toMatch(/\r\ncontent-type: application\/problem\+json/i);
    expect(response.json).toMatchObject({ code: "request_timeout", retryable: true });
    expect(await connection.closedByServer()).toBe(true);
    expect((await call(`${server.baseUrl}/me`, { headers: ci })).status).toBe(200);
  });

  it("on the token endpoint is answered in OAuth's terms", async () => {
    const connection = await RawConnection.open(server.origin);
    connection.send(
      request("POST", "/v1/oauth/token", {
        "content-type": "application/x-www-form-urlencoded",
        "content-length": "100",
      }),
    );
    connection.send("client_id=cl_");
    const response = await connection.finalResponse(10_000);
    expect(response.status).toBe(408);
    expect(response.headers).toMatch(/\r\ncontent-type: application\/json/i);
    expect(response.json).toMatchObject({ code: "request_timeout", error: "invalid_request" });
    expect(await connection.closedByServer()).toBe(true);
  });

  it("does not cut a kept-alive connection that idles between complete requests", async () => {
    const connection = await RawConnection.open(server.origin);
    const body = JSON.stringify({ name: "x" });
    connection.send(
      request(
        "POST",
        "/v1/apps",
        { ...ci, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
        body,
      ),
    );
    const first = await connection.finalResponse(10_000);
    expect(first.status).toBe(400); // no package_name: refused for what it says, at once
    // Idle for longer than the body timeout, between requests: the connection stays.
    expect(await connection.closedByServer(1500)).toBe(false);
    const before = connection.text.length;
    connection.send(request("GET", "/v1/me", ci));
    await connection.waitFor((received) => /HTTP\/1\.1 200/.test(received.slice(before)));
    connection.destroy();
  });
});
