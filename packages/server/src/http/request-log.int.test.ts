// The request log at `info`, the production default: one line per request, written when it is answered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../test/harness.ts";
import type { IssuedCredentials } from "../features/clients/index.ts";

let server: TestServer;
let ci: IssuedCredentials;

beforeAll(async () => {
  server = await startTestServer({
    beforeListen: (app) => {
      app.get("/v1/test/request-log-boom", { config: { auth: "public" } }, async () => {
        throw new Error("failing on purpose");
      });
    },
  });
  ci = await server.createClient("acme", "ci");
});
afterAll(() => server.close());

/** Every line logged under this request ID, parsed. */
function linesOf(requestId: string): Record<string, unknown>[] {
  return server.logs
    .flatMap((chunk) => chunk.split("\n"))
    .filter((line) => line.includes(requestId))
    .map((line) => JSON.parse(line));
}

/**
 * The server writes the request's line once the response is handed to the socket, which can be after the
 * client has read it: wait for it (bounded) rather than race it.
 */
async function waitForLine(requestId: string, msg: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!linesOf(requestId).some((line) => line.msg === msg)) {
    if (Date.now() > deadline) throw new Error(`no "${msg}" line for ${requestId} within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("request log", () => {
  it("writes exactly one info line per request, with who asked what and how it went, and no secret", async () => {
    const token = await server.token(ci);
    const { status, headers } = await call(`${server.baseUrl}/me?limit=5&access_token=${token}`, {
      headers: { "x-api-key": token, "x-request-id": "request-log-one-line" },
    });
    expect(status).toBe(200);
    expect(headers.get("x-request-id")).toBe("request-log-one-line");
    await waitForLine("request-log-one-line", "request completed");
    // A moment more, in case a second line were on its way.
    await new Promise((resolve) => setTimeout(resolve, 50));

    const lines = linesOf("request-log-one-line");
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      level: 30,
      msg: "request completed",
      request_id: "request-log-one-line",
      method: "GET",
      url: "/v1/me?limit=5&access_token=[REDACTED]",
      status: 200,
      client_id: ci.client_id,
      remote_address: "127.0.0.1",
    });
    expect(line?.response_time_ms).toEqual(expect.any(Number));
    expect(line?.response_time_ms).toBeGreaterThanOrEqual(0);
    const text = JSON.stringify(line);
    expect(text).not.toContain(token);
    expect(text).not.toContain(ci.client_secret);
    expect(server.logs.join("")).not.toContain("incoming request");
  });

  it("writes the token request's line without the secret sent in its body", async () => {
    const form = new URLSearchParams({
      client_id: ci.client_id,
      client_secret: ci.client_secret,
      audience: "testbay",
    });
    const { status } = await call(`${server.baseUrl}/oauth/token`, {
      method: "POST",
      body: form,
      headers: { "x-request-id": "request-log-token" },
    });
    expect(status).toBe(200);
    await waitForLine("request-log-token", "request completed");
    const lines = linesOf("request-log-token");
    expect(lines).toEqual([
      expect.objectContaining({ method: "POST", url: "/v1/oauth/token", status: 200, level: 30 }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(ci.client_secret);
  });

  it("names no client for a request that was not authenticated", async () => {
    const { status } = await call(`${server.baseUrl}/me`, {
      headers: { "x-request-id": "request-log-anonymous" },
    });
    expect(status).toBe(401);
    await waitForLine("request-log-anonymous", "request completed");
    const lines = linesOf("request-log-anonymous");
    expect(lines).toEqual([expect.objectContaining({ status: 401, level: 30 })]);
    expect(lines[0]).not.toHaveProperty("client_id");
  });

  it("logs a failing request's error with its stack, beside its one request line", async () => {
    const { status } = await call(`${server.baseUrl}/test/request-log-boom`, {
      headers: { "x-request-id": "request-log-failure" },
    });
    expect(status).toBe(500);
    await waitForLine("request-log-failure", "request completed");
    const lines = linesOf("request-log-failure");
    expect(lines.filter((line) => line.msg === "request completed")).toEqual([
      expect.objectContaining({ level: 30, status: 500, url: "/v1/test/request-log-boom" }),
    ]);
    const failed = lines.find((line) => line.msg === "request failed");
    expect(failed).toMatchObject({ level: 50, request_id: "request-log-failure" });
    expect((failed?.err as { stack?: string } | undefined)?.stack).toMatch(/failing on purpose\n\s+at /);
    expect(lines).toHaveLength(2);
  });
});
