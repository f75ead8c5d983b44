import { type createPrivateKey, generateKeyPairSync } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import type { IssuedCredentials } from "../clients/index.ts";
import { loadSigningKey } from "./signing-key.ts";
import { tokenIssuer } from "./tokens.ts";

let server: TestServer;
let ci: IssuedCredentials;

beforeAll(async () => {
  server = await startTestServer();
  ci = await server.createClient("acme", "ci");
});
afterAll(() => server.close());

/** Moves the clock past any rate-limit effect of earlier tests: each test starts with full buckets. */
function refillBuckets() {
  server.clock.advance(60_000);
}

function tokenRequest(body: Record<string, unknown>) {
  return call(`${server.baseUrl}/oauth/token`, { json: body });
}

function me(headers: Record<string, string>) {
  return call(`${server.baseUrl}/me`, { headers });
}

/** Signs a token with the server's own key but claims of the test's choosing. */
async function forge(
  claims: Record<string, unknown>,
  options: { audience?: string; expiresAt?: number; key?: ReturnType<typeof createPrivateKey> } = {},
) {
  const serverKey = await loadSigningKey(server.app.services.database.db, undefined, server.clock);
  const now = Math.floor(server.clock.now() / 1000);
  return new SignJWT({ org: claims.org, role: claims.role })
    .setProtectedHeader({ alg: "EdDSA", kid: serverKey.kid })
    .setIssuer(tokenIssuer)
    .setSubject(String(claims.sub))
    .setAudience(options.audience ?? "testbay")
    .setIssuedAt(now)
    .setExpirationTime(options.expiresAt ?? now + 3600)
    .sign(options.key ?? serverKey.privateKey);
}

async function claimsOf(token: string) {
  const [, payload] = token.split(".");
  return JSON.parse(Buffer.from(String(payload), "base64url").toString()) as Record<string, unknown>;
}

describe("POST /v1/oauth/token", () => {
  it("issues a 24-hour api-key token for a JSON body", async () => {
    refillBuckets();
    const { status, headers, body } = await tokenRequest({
      grant_type: "client_credentials",
      client_id: ci.client_id,
      client_secret: ci.client_secret,
      audience: "testbay",
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: "api-key", expires_in: 86400 });
    expect(Date.parse(body.expires_at)).toBe(Math.floor(server.clock.now() / 1000) * 1000 + 86_400_000);
    expect(headers.get("cache-control")).toBe("no-store");
    const claims = await claimsOf(body.access_token);
    expect(claims).toMatchObject({ sub: ci.client_id, aud: "testbay", role: "ci", iss: tokenIssuer });
    expect((await me({ "x-api-key": body.access_token })).status).toBe(200);
  });

  it("issues a token for a form-encoded body, without grant_type (Auth0-style clients)", async () => {
    refillBuckets();
    const form = new URLSearchParams({
      client_id: ci.client_id,
      client_secret: ci.client_secret,
      audience: "testbay",
    });
    const { status, body } = await call(`${server.baseUrl}/oauth/token`, { method: "POST", body: form });
    expect(status).toBe(200);
    expect(body.token_type).toBe("api-key");
  });

  it("rejects a wrong secret as invalid_client, with OAuth members", async () => {
    refillBuckets();
    const { status, headers, body } = await tokenRequest({
      client_id: ci.client_id,
      client_secret: `${ci.client_secret}x`,
      audience: "testbay",
    });
    expect(status).toBe(401);
    // OAuth clients read token errors only as JSON (RFC 6749 §5.2); the problem members are all there.
    expect(headers.get("content-type")).toMatch(/^application\/json/);
    expect(headers.get("www-authenticate")).toBeNull();
    expect(body).toMatchObject({
      code: "invalid_access_token",
      reason: "invalid_client",
      error: "invalid_client",
      retryable: false,
    });
    expect(body.fix).toMatch(/client ID, client secret and audience/);
  });

  it("answers an unknown client ID exactly like a wrong secret", async () => {
    refillBuckets();
    const unknown = await tokenRequest({ client_id: "cl_nobody", client_secret: "x", audience: "testbay" });
    const wrong = await tokenRequest({ client_id: ci.client_id, client_secret: "x", audience: "testbay" });
    expect(unknown.status).toBe(401);
    const { request_id: _a, ...unknownBody } = unknown.body;
    const { request_id: _b, ...wrongBody } = wrong.body;
    expect(unknownBody).toEqual(wrongBody);
  });

  it("rejects a wrong audience and names the right one in the fix", async () => {
    refillBuckets();
    const { status, body } = await tokenRequest({
      client_id: ci.client_id,
      client_secret: ci.client_secret,
      audience: "https://api.example.com",
    });
    expect(status).toBe(401);
    expect(body).toMatchObject({ reason: "invalid_client", error: "invalid_client" });
    expect(body.fix).toContain('"testbay"');
  });

  it("rejects another grant type as unsupported_grant_type", async () => {
    refillBuckets();
    const { status, body } = await tokenRequest({
      grant_type: "password",
      client_id: ci.client_id,
      client_secret: ci.client_secret,
      audience: "testbay",
    });
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: "invalid_request", error: "unsupported_grant_type" });
  });

  it("lists every missing field with its path", async () => {
    refillBuckets();
    const { status, body } = await tokenRequest({ audience: "testbay" });
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: "invalid_request", error: "invalid_request" });
    expect(body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["/client_id", "/client_secret"]);
  });

  it("refuses tokens to a disabled client, and stops its existing tokens at once", async () => {
    refillBuckets();
    const doomed = await server.createClient("acme", "ci");
    const token = await server.token(doomed);
    expect((await me({ "x-api-key": token })).status).toBe(200);

    await server.app.services.clients.disableClient(doomed.client_id);

    const reuse = await me({ "x-api-key": token });
    expect(reuse.status).toBe(401);
    expect(reuse.body.reason).toBe("client_disabled");
    const fresh = await tokenRequest({
      client_id: doomed.client_id,
      client_secret: doomed.client_secret,
      audience: "testbay",
    });
    expect(fresh.status).toBe(401);
    expect(fresh.body.reason).toBe("client_disabled");
  });

  it("stops a client's tokens at once when another instance on the same database disables it", async () => {
    refillBuckets();
    // Another process on the same store: the admin CLI, or a second API instance. Nothing tells this one.
    const other = await startTestServer({ shareWith: server, clock: server.clock });
    try {
      const doomed = await server.createClient("acme", "ci");
      const headers = { "x-api-key": await server.token(doomed) };
      expect((await me(headers)).status).toBe(200);

      await other.app.services.clients.disableClient(doomed.client_id);

      const reuse = await me(headers);
      expect(reuse.status).toBe(401);
      expect(reuse.body.reason).toBe("client_disabled");
    } finally {
      await other.close();
    }
  });

  it("judges each of many concurrent requests by the client as stored when it arrived", async () => {
    refillBuckets();
    const busy = await server.createClient("acme", "agent"); // the agent bucket takes 200 at once
    const headers = { "x-api-key": await server.token(busy) };
    const before = await Promise.all(Array.from({ length: 50 }, () => me(headers)));
    expect(before.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(before.map((r) => r.body.client_id))).toEqual(new Set([busy.client_id]));

    await server.app.services.clients.disableClient(busy.client_id);

    const after = await Promise.all(Array.from({ length: 50 }, () => me(headers)));
    expect(after.map((r) => r.status)).toEqual(Array(50).fill(401));
    expect(new Set(after.map((r) => r.body.reason))).toEqual(new Set(["client_disabled"]));
    // Every refusal is its own problem document, with its own request ID.
    expect(new Set(after.map((r) => r.body.request_id)).size).toBe(50);
  });
});

describe("x-api-key authentication", () => {
  it("answers a request without a token with reason missing", async () => {
    const { status, body } = await me({});
    expect(status).toBe(401);
    expect(body).toMatchObject({ code: "invalid_access_token", reason: "missing" });
    expect(body.fix).toContain("x-api-key");
  });

  it("refuses Authorization: Bearer and says to use x-api-key", async () => {
    refillBuckets();
    const token = await server.token(ci);
    const { status, body } = await me({ authorization: `Bearer ${token}` });
    expect(status).toBe(401);
    expect(body.reason).toBe("bearer_scheme");
    expect(body.fix).toMatch(/x-api-key/);
    expect(body.fix).toMatch(/not as Authorization: Bearer/);
  });

  it("treats a 'Bearer ' prefix inside x-api-key and garbage as malformed", async () => {
    refillBuckets();
    const token = await server.token(ci);
    for (const value of [`Bearer ${token}`, "not-a-token", "a.b", `${token}.extra`, "x".repeat(5000)]) {
      const { status, body } = await me({ "x-api-key": value });
      expect(status, value.slice(0, 20)).toBe(401);
      expect(body.reason, value.slice(0, 20)).toBe("malformed");
    }
  });

  it("rejects a token whose payload was altered (an escalated role)", async () => {
    refillBuckets();
    const token = await server.token(ci);
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(Buffer.from(String(payload), "base64url").toString());
    const altered = Buffer.from(JSON.stringify({ ...claims, role: "admin" })).toString("base64url");
    const { status, body } = await me({ "x-api-key": `${header}.${altered}.${signature}` });
    expect(status).toBe(401);
    expect(body.reason).toBe("bad_signature");
  });

  it("rejects a token with a tampered signature", async () => {
    refillBuckets();
    const token = await server.token(ci);
    const [header, payload, signature = ""] = token.split(".");
    const bytes = Buffer.from(signature, "base64url");
    bytes[10] = (bytes[10] ?? 0) ^ 0xff;
    const { body } = await me({ "x-api-key": `${header}.${payload}.${bytes.toString("base64url")}` });
    expect(body.reason).toBe("bad_signature");
  });

  it("rejects alg: none", async () => {
    refillBuckets();
    const token = await server.token(ci);
    const [, payload] = token.split(".");
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    const { status, body } = await me({ "x-api-key": `${none}.${payload}.` });
    expect(status).toBe(401);
    expect(body.reason).toBe("bad_signature");
  });

  it("rejects HS256 signed with the public key (algorithm confusion)", async () => {
    refillBuckets();
    const token = await server.token(ci);
    const claims = await claimsOf(token);
    const serverKey = await loadSigningKey(server.app.services.database.db, undefined, server.clock);
    const publicPem = serverKey.publicKey.export({ type: "spki", format: "pem" });
    const confused = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: serverKey.kid })
      .sign(new TextEncoder().encode(String(publicPem)));
    const { body } = await me({ "x-api-key": confused });
    expect(body.reason).toBe("bad_signature");
  });

  it("rejects a token signed by another Ed25519 key that claims the server's key id", async () => {
    refillBuckets();
    const claims = await claimsOf(await server.token(ci));
    const stranger = generateKeyPairSync("ed25519").privateKey;
    const token = await forge(claims, { key: stranger });
    const { body } = await me({ "x-api-key": token });
    expect(body.reason).toBe("bad_signature");
  });

  it("accepts a token until it expires after 24 hours, then says expired", async () => {
    refillBuckets();
    const token = await server.token(ci);
    server.clock.advance(24 * 3600 * 1000 - 1000);
    expect((await me({ "x-api-key": token })).status).toBe(200);
    server.clock.advance(2000);
    const { status, body } = await me({ "x-api-key": token });
    expect(status).toBe(401);
    expect(body.reason).toBe("expired");
    expect(body.fix).toMatch(/fresh token at the start of each pipeline run/);
  });

  it("rejects a validly signed token for another audience", async () => {
    refillBuckets();
    const claims = await claimsOf(await server.token(ci));
    const token = await forge(claims, { audience: "another-service" });
    const { status, body } = await me({ "x-api-key": token });
    expect(status).toBe(401);
    expect(body.reason).toBe("wrong_audience");
    expect(body.fix).toContain('"testbay"');
  });

  it("rejects a validly signed token whose client does not exist", async () => {
    refillBuckets();
    const claims = await claimsOf(await server.token(ci));
    const token = await forge({ ...claims, sub: "cl_ghost" });
    const { status, body } = await me({ "x-api-key": token });
    expect(status).toBe(401);
    expect(body.reason).toBe("client_disabled");
  });
});

describe("roles and organizations", () => {
  it("lets every role ask who it is", async () => {
    refillBuckets();
    for (const role of ["ci", "agent", "admin"] as const) {
      const client = await server.createClient("roles", role);
      const { status, body } = await me({ "x-api-key": await server.token(client) });
      expect(status).toBe(200);
      expect(body).toMatchObject({ client_id: client.client_id, role, organization: { name: "roles" } });
    }
  });

  it("answers 403 forbidden, naming the role needed, when a ci or agent client calls an admin route", async () => {
    refillBuckets();
    for (const role of ["ci", "agent"] as const) {
      const client = await server.createClient("roles", role);
      const { status, body } = await call(`${server.baseUrl}/clients`, {
        headers: { "x-api-key": await server.token(client) },
      });
      expect(status).toBe(403);
      expect(body.code).toBe("forbidden");
      expect(body.fix).toContain("admin");
    }
  });

  it("shows an admin its own organization's clients and never another organization's", async () => {
    refillBuckets();
    const adminA = await server.createClient("org-a", "admin");
    const ciA = await server.createClient("org-a", "ci");
    const ciB = await server.createClient("org-b", "ci");
    const headers = { "x-api-key": await server.token(adminA) };

    const own = await call(`${server.baseUrl}/clients/${ciA.client_id}`, { headers });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ client_id: ciA.client_id, org: "org-a", role: "ci" });

    const list = await call(`${server.baseUrl}/clients`, { headers });
    const ids = list.body.items.map((c: { client_id: string }) => c.client_id);
    expect(ids).toContain(ciA.client_id);
    expect(ids).not.toContain(ciB.client_id);
    expect(JSON.stringify(list.body)).not.toMatch(/secret/);

    const other = await call(`${server.baseUrl}/clients/${ciB.client_id}`, { headers });
    const unknown = await call(`${server.baseUrl}/clients/cl_01ZZZZZZZZZZZZZZZZZZZZZZZZ`, { headers });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ code: "client_not_found", reason: "unknown" });
    // Indistinguishable from an ID that does not exist at all, but for the ID itself.
    expect(other.body.detail.replace(ciB.client_id, "ID")).toBe(unknown.body.detail.replace(/cl_\w+/, "ID"));
  });
});
