import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../test/harness.ts";
import type { IssuedCredentials } from "../features/clients/index.ts";

let server: TestServer;
let ci: IssuedCredentials;

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_SUPPORT_EMAIL: "help@testbay.example" },
    beforeListen: (app) => {
      app.get("/v1/test/boom", { config: { auth: "public" } }, async () => {
        throw new Error("database password is hunter2 at /srv/secret/path");
      });
    },
  });
  ci = await server.createClient("acme", "ci");
});
afterAll(() => server.close());

/** Sends raw bytes and returns the raw response: for requests fetch() refuses to make. */
function raw(request: string): Promise<string> {
  const port = Number(new URL(server.origin).port);
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    let response = "";
    socket.on("data", (chunk) => {
      response += chunk;
    });
    socket.on("close", () => resolve(response));
    socket.on("error", reject);
    socket.setTimeout(5000, () => socket.destroy(new Error("no answer in 5 s")));
  });
}

function problemOf(rawResponse: string) {
  const [head = "", body = ""] = rawResponse.split("\r\n\r\n");
  return { statusLine: head.split("\r\n")[0], head, problem: JSON.parse(body) };
}

describe("problem documents", () => {
  it("answers an unknown route with 404 route_not_found", async () => {
    const { status, headers, body } = await call(`${server.baseUrl}/no/such/thing?x=1`);
    expect(status).toBe(404);
    expect(headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(body).toMatchObject({
      type: "/problems/route_not_found",
      status: 404,
      code: "route_not_found",
      retryable: false,
    });
    expect(body.detail).toBe("GET /v1/no/such/thing is not an endpoint of this server.");
    expect(body.request_id).toBe(headers.get("x-request-id"));
  });

  it("describes every problem type at the URI its `type` names", async () => {
    const refused = await call(`${server.baseUrl}/me`);
    const described = await call(new URL(refused.body.type, server.origin).toString());
    expect(described.status).toBe(200);
    expect(described.body).toMatchObject({ code: "invalid_access_token", status: 401, retryable: false });
    expect((await call(`${server.origin}/problems/nonsense`)).status).toBe(404);
  });

  it("answers malformed JSON with 400 invalid_request and a fix", async () => {
    for (const body of ['{"client_id": ', "{'single': 'quotes'}", "[1,2", '{"a":1}}', "\u0000"]) {
      const response = await call(`${server.baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(response.status, body).toBe(400);
      expect(response.body.code).toBe("invalid_request");
      expect(response.body.fix).toMatch(/well-formed JSON/);
    }
  });

  it("rejects prototype-poisoning JSON without harm", async () => {
    const response = await call(`${server.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"__proto__": {"role": "admin"}, "client_id": "x", "client_secret": "y", "audience": "testbay"}',
    });
    expect(response.status).toBe(400);
    expect(({} as Record<string, unknown>).role).toBeUndefined();
  });

  it("answers JSON of the wrong shape with the path of each wrong field", async () => {
    for (const json of [[], "text", 42, null, { client_id: 5, client_secret: [], audience: {} }]) {
      const response = await call(`${server.baseUrl}/oauth/token`, { json });
      expect(response.status, JSON.stringify(json)).toBe(400);
      expect(response.body.code).toBe("invalid_request");
      expect(response.body.errors.length).toBeGreaterThan(0);
    }
  });

  it("answers an empty JSON body and an unsupported content type", async () => {
    const empty = await call(`${server.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "",
    });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe("invalid_request");

    const text = await call(`${server.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "client_id=x",
    });
    expect(text.status).toBe(415);
    expect(text.body.code).toBe("unsupported_media_type");
  });

  it("answers an oversized body with 413 request_too_large", async () => {
    const response = await call(`${server.baseUrl}/oauth/token`, {
      json: { client_id: "x", client_secret: "y", audience: "testbay", padding: "x".repeat(20_000) },
    });
    expect(response.status).toBe(413);
    expect(response.body.code).toBe("request_too_large");
  });

  it("answers huge headers with a 431 problem document and closes the connection", async () => {
    const { statusLine, head, problem } = problemOf(
      await raw(`GET /v1/me HTTP/1.1\r\nHost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`),
    );
    expect(statusLine).toBe("HTTP/1.1 431 Request Header Fields Too Large");
    expect(head).toMatch(/Content-Type: application\/problem\+json/);
    expect(head).toMatch(/Connection: close/);
    expect(problem).toMatchObject({ code: "headers_too_large", status: 431 });
  });

  it("answers broken header lines and bad percent-encoding with 400 problems", async () => {
    const broken = problemOf(await raw("GET /v1/me HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n"));
    expect(broken.statusLine).toBe("HTTP/1.1 400 Bad Request");
    expect(broken.problem.code).toBe("invalid_request");

    const badUrl = await call(`${server.baseUrl}/%zz`);
    expect(badUrl.status).toBe(400);
    expect(badUrl.body.code).toBe("invalid_request");
    expect(badUrl.body.fix).toMatch(/Percent-encode/);
  });

  it("treats path tricks as unknown routes, never as files", async () => {
    for (const path of [
      "/../../etc/passwd",
      "/v1/%2e%2e/%2e%2e/etc/passwd",
      "/v1/me/..%2f..%2f",
      "//v1//me",
    ]) {
      const response = await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const { statusLine, problem } = problemOf(response);
      expect(statusLine, path).toMatch(/^HTTP\/1\.1 (400|401|404) /);
      expect(problem.code, path).toMatch(/^(route_not_found|invalid_request|invalid_access_token)$/);
      expect(response).not.toMatch(/root:/);
    }
  });

  it("answers odd x-api-key values as malformed tokens, never as server errors", async () => {
    for (const value of [
      " ",
      "\t",
      "null",
      "undefined",
      "é".repeat(10),
      "a.b.c",
      "....",
      "%00",
      "x".repeat(15_000),
    ]) {
      const response = await call(`${server.baseUrl}/me`, { headers: { "x-api-key": value } });
      expect([400, 401], JSON.stringify(value.slice(0, 10))).toContain(response.status);
      expect(response.body.code).toMatch(/^(invalid_access_token|invalid_request)$/);
    }
  });

  it("turns an unexpected failure into a 500 that leaks nothing and names the support contact", async () => {
    const { status, headers, body } = await call(`${server.baseUrl}/test/boom`);
    expect(status).toBe(500);
    expect(body).toMatchObject({ code: "internal_error", status: 500, retryable: false });
    expect(body.fix).toContain("help@testbay.example");
    expect(body.fix).toContain("request_id");
    expect(JSON.stringify(body)).not.toMatch(/hunter2|\/srv|Error:|at .*\.ts/);
    // …while the log keeps what an operator needs, under the same request ID.
    const logged = server.logs.find((line) => line.includes('"request failed"'));
    expect(logged).toContain(headers.get("x-request-id"));
    expect(logged).toContain("hunter2");
  });

  it("keeps a sane X-Request-Id from the caller and replaces an odd one", async () => {
    const kept = await call(`${server.baseUrl}/me`, { headers: { "x-request-id": "ci-run-42.step-3" } });
    expect(kept.headers.get("x-request-id")).toBe("ci-run-42.step-3");
    expect(kept.body.request_id).toBe("ci-run-42.step-3");
    const replaced = await call(`${server.baseUrl}/me`, { headers: { "x-request-id": "<script>" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^req_[A-Za-z0-9_-]{11}\.[0-9a-z]+$/);
  });
});

describe("logs", () => {
  it("never contain client secrets or tokens", async () => {
    server.clock.advance(60_000);
    const token = await server.token(ci);
    const form = new URLSearchParams({
      client_id: ci.client_id,
      client_secret: ci.client_secret,
      audience: "testbay",
    });
    await call(`${server.baseUrl}/oauth/token`, { method: "POST", body: form });
    await call(`${server.baseUrl}/me`, { headers: { "x-api-key": token } });
    await call(`${server.baseUrl}/me`, { headers: { authorization: `Bearer ${token}` } });
    await call(`${server.baseUrl}/me?client_secret=${ci.client_secret}&token=${token}`, {
      headers: { "x-api-key": token },
    });
    await call(`${server.baseUrl}/oauth/token`, {
      json: { client_id: ci.client_id, client_secret: ci.client_secret },
    });

    const logs = server.logs.join("");
    expect(logs).toContain(ci.client_id);
    expect(logs).toContain("[REDACTED]");
    expect(logs).not.toContain(ci.client_secret);
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(token.split(".")[2]);
  });
});

describe("operations endpoints", () => {
  it("reports liveness and readiness without authentication", async () => {
    expect((await call(`${server.origin}/healthz`)).body).toEqual({
      status: "ok",
      version: expect.any(String),
    });
    const ready = await call(`${server.origin}/readyz`);
    expect(ready.status).toBe(200);
    // The scaled configuration has a shared rate limiter to check as well.
    const limiter = server.config.redisUrl ? [{ name: "rate_limiter", ok: true }] : [];
    expect(ready.body).toEqual({
      status: "ready",
      checks: [{ name: "database", ok: true }, { name: "storage", ok: true }, ...limiter],
    });
  });

  it("serves an OpenAPI 3.1 document describing the token endpoint and x-api-key", async () => {
    const { status, body } = await call(`${server.baseUrl}/openapi.json`);
    expect(status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    expect(body.components.securitySchemes.apiKey).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "x-api-key",
    });
    // No token yet: HTTP Basic (client_secret_basic), or the credentials in the body.
    expect(body.paths["/v1/oauth/token"].post.security).toEqual([{}, { clientSecretBasic: [] }]);
    expect(body.paths["/v1/oauth/token"].post.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/TokenRequest",
    });
    // client_id and client_secret may come by HTTP Basic instead (client_secret_basic).
    expect(body.components.schemas.TokenRequest.required).toEqual(["audience"]);
    expect(body.components.schemas.Problem.required).toContain("fix");
    expect(body.paths["/v1/test/boom"]).toBeDefined();
  });
});
