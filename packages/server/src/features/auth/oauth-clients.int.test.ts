import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import type { IssuedCredentials } from "../clients/index.ts";

/**
 * The token endpoint as standard OAuth 2.0 clients use it: discovered from RFC 8414 metadata and called with
 * client_secret_basic or client_secret_post by oauth4webapi, a maintained, spec-strict client library.
 */

let server: TestServer;
let ci: IssuedCredentials;

beforeAll(async () => {
  server = await startTestServer();
  ci = await server.createClient("acme", "ci");
});
afterAll(() => server.close());

/** The test server speaks plain HTTP on 127.0.0.1; the library refuses that unless told. */
const insecure = { [oauth.allowInsecureRequests]: true };
/** Testbay's tokens are used as x-api-key, so they are typed `api-key`, which the library must be told of. */
const recognizedTokenTypes: oauth.RecognizedTokenTypes = { "api-key": () => {} };

function refillBuckets() {
  server.clock.advance(60_000);
}

async function discover(): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.origin);
  const response = await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

async function clientCredentialsToken(
  as: oauth.AuthorizationServer,
  clientId: string,
  auth: oauth.ClientAuth,
): Promise<oauth.TokenEndpointResponse> {
  const client: oauth.Client = { client_id: clientId };
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    auth,
    { audience: "testbay" },
    insecure,
  );
  return oauth.processClientCredentialsResponse(as, client, response, { recognizedTokenTypes });
}

function me(token: string) {
  return call(`${server.baseUrl}/me`, { headers: { "x-api-key": token } });
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
}

describe("GET /.well-known/oauth-authorization-server", () => {
  it("publishes the issuer, the absolute token endpoint, the grant and both client authentication methods", async () => {
    const as = await discover();
    expect(as).toEqual({
      issuer: server.origin,
      token_endpoint: `${server.origin}/v1/oauth/token`,
      grant_types_supported: ["client_credentials"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      response_types_supported: [],
    });
  });

  it("names the configured public URL rather than the address the request came to", async () => {
    const behindProxy = await startTestServer({
      shareWith: server,
      clock: server.clock,
      env: { TESTBAY_PUBLIC_URL: "https://testbay.example.com/v1" },
    });
    try {
      const { status, body } = await call(`${behindProxy.origin}/.well-known/oauth-authorization-server`);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        issuer: "https://testbay.example.com",
        token_endpoint: "https://testbay.example.com/v1/oauth/token",
      });
    } finally {
      await behindProxy.close();
    }
  });

  it("is public and not rate limited", async () => {
    for (let i = 0; i < 40; i++) {
      const { status } = await call(`${server.origin}/.well-known/oauth-authorization-server`);
      expect(status).toBe(200);
    }
  });
});

describe("oauth4webapi against the token endpoint", () => {
  it("obtains a token with client_secret_basic, and the token works as x-api-key", async () => {
    refillBuckets();
    const as = await discover();
    const result = await clientCredentialsToken(as, ci.client_id, oauth.ClientSecretBasic(ci.client_secret));
    expect(result).toMatchObject({ token_type: "api-key", expires_in: 86400 });
    const { status, body } = await me(result.access_token);
    expect(status).toBe(200);
    expect(body.client_id).toBe(ci.client_id);
  });

  it("obtains a token with client_secret_post, and the token works as x-api-key", async () => {
    refillBuckets();
    const as = await discover();
    const result = await clientCredentialsToken(as, ci.client_id, oauth.ClientSecretPost(ci.client_secret));
    expect(result.token_type).toBe("api-key");
    expect((await me(result.access_token)).body.client_id).toBe(ci.client_id);
  });

  it("reads a refused client_secret_post call's OAuth error: invalid_client", async () => {
    refillBuckets();
    const as = await discover();
    const refused = await clientCredentialsToken(as, ci.client_id, oauth.ClientSecretPost("tbs_wrong")).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
    const error = refused as oauth.ResponseBodyError;
    expect(error.status).toBe(401);
    expect(error.error).toBe("invalid_client");
    expect(error.error_description).toBe("Unknown client ID or wrong client secret.");
    // Testbay's own members travel in the same body.
    expect(error.cause).toMatchObject({ code: "invalid_access_token", reason: "invalid_client" });
    expect(error.cause.fix).toMatch(/client ID, client secret and audience/);
  });

  it("answers a refused client_secret_basic call with a Basic challenge and the invalid_client body", async () => {
    refillBuckets();
    const as = await discover();
    const refused = await clientCredentialsToken(as, ci.client_id, oauth.ClientSecretBasic("tbs_wrong")).then(
      () => undefined,
      (error: unknown) => error,
    );
    // RFC 6749 §5.2: a 401 to a client that used HTTP Basic carries WWW-Authenticate; the library reports
    // the challenge first and leaves the body unread for the caller.
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = refused as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause.map((c) => c.scheme)).toEqual(["basic"]);
    expect(challenge.response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await challenge.response.json()).toMatchObject({
      error: "invalid_client",
      code: "invalid_access_token",
      reason: "invalid_client",
    });
  });

  it("reads another grant type (refresh_token) as unsupported_grant_type", async () => {
    refillBuckets();
    const as = await discover();
    const client: oauth.Client = { client_id: ci.client_id };
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(ci.client_secret),
      "rt_never_issued",
      { additionalParameters: { audience: "testbay" }, ...insecure },
    );
    const refused = await oauth
      .processRefreshTokenResponse(as, client, response, { recognizedTokenTypes })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
    expect((refused as oauth.ResponseBodyError).error).toBe("unsupported_grant_type");
    expect((refused as oauth.ResponseBodyError).status).toBe(400);
  });
});

describe("client_secret_basic as curl and hand-written clients send it", () => {
  const token = (headers: Record<string, string>, json: Record<string, unknown> = { audience: "testbay" }) =>
    call(`${server.baseUrl}/oauth/token`, { headers, json });

  it("accepts curl -u id:secret with the audience in a JSON body", async () => {
    refillBuckets();
    const { status, body } = await token({ authorization: basic(ci.client_id, ci.client_secret) });
    expect(status).toBe(200);
    expect((await me(body.access_token)).status).toBe(200);
  });

  it("URL-decodes the ID and secret (RFC 6749 §2.3.1) and accepts the same client_id in the body", async () => {
    refillBuckets();
    const encodedId = ci.client_id.replace(/^c/, "%63");
    const viaEncoding = await token({ authorization: basic(encodedId, ci.client_secret) });
    expect(viaEncoding.status).toBe(200);
    const sameIdInBody = await token(
      { authorization: basic(ci.client_id, ci.client_secret) },
      { audience: "testbay", client_id: ci.client_id },
    );
    expect(sameIdInBody.status).toBe(200);
  });

  it("refuses Basic together with a body secret, or with another client_id, as invalid_request", async () => {
    refillBuckets();
    const authorization = basic(ci.client_id, ci.client_secret);
    const both = await token(
      { authorization },
      { audience: "testbay", client_id: ci.client_id, client_secret: ci.client_secret },
    );
    expect(both.status).toBe(400);
    expect(both.headers.get("content-type")).toMatch(/^application\/json/);
    expect(both.body).toMatchObject({ code: "invalid_request", error: "invalid_request" });
    expect(both.body.errors).toEqual([expect.objectContaining({ path: "/client_secret" })]);

    const mismatch = await token({ authorization }, { audience: "testbay", client_id: "cl_someone_else" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({ code: "invalid_request", error: "invalid_request" });
    expect(mismatch.body.errors).toEqual([expect.objectContaining({ path: "/client_id" })]);
  });

  it("refuses malformed Basic credentials with 400 invalid_request, never a 5xx", async () => {
    refillBuckets();
    const malformed = [
      "Basic",
      "Basic !!!!",
      `Basic ${Buffer.from("no-colon-here").toString("base64")}`,
      basic(ci.client_id, ""),
      basic("", ci.client_secret),
      basic(ci.client_id, "%zz"),
      basic("cl_%00nul", "x"),
      basic("cl_%ED%A0%80", "x"), // an encoded lone surrogate: not UTF-8
      `Basic ${Buffer.from([0x63, 0x6c, 0xff, 0x3a, 0x78]).toString("base64")}`, // not UTF-8
      basic("x".repeat(200), "y"),
    ];
    for (const authorization of malformed) {
      const { status, body } = await token({ authorization });
      expect(status, authorization).toBe(400);
      expect(body, authorization).toMatchObject({ code: "invalid_request", error: "invalid_request" });
      expect(body.fix, authorization).toMatch(/Authorization: Basic/);
    }
  });

  it("answers a wrong Basic secret with 401 invalid_client and WWW-Authenticate: Basic", async () => {
    refillBuckets();
    const { status, headers, body } = await token({ authorization: basic(ci.client_id, "tbs_wrong") });
    expect(status).toBe(401);
    expect(headers.get("www-authenticate")).toMatch(/^Basic realm="testbay"/);
    expect(body).toMatchObject({ error: "invalid_client", reason: "invalid_client" });
  });

  it("answers another Authorization scheme with 401 invalid_client and the Basic challenge", async () => {
    refillBuckets();
    const { status, headers, body } = await token(
      { authorization: "Bearer abc.def.ghi" },
      { audience: "testbay", client_id: ci.client_id, client_secret: ci.client_secret },
    );
    expect(status).toBe(401);
    expect(headers.get("www-authenticate")).toMatch(/^Basic /);
    expect(body).toMatchObject({ error: "invalid_client", code: "invalid_access_token" });
  });

  it("counts failed Basic calls per client ID and address, the same count as body-authenticated ones", async () => {
    refillBuckets();
    const limited = await server.createClient("acme", "ci");
    const other = await server.createClient("acme", "ci");
    for (let i = 0; i < 20; i++) {
      const { status } = await token({ authorization: basic(limited.client_id, "tbs_wrong") });
      expect(status).toBe(401);
    }
    const refused = await token({ authorization: basic(limited.client_id, limited.client_secret) });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    expect(refused.body).toMatchObject({ code: "rate_limited", error: "temporarily_unavailable" });
    const viaBody = await token(
      {},
      { audience: "testbay", client_id: limited.client_id, client_secret: limited.client_secret },
    );
    expect(viaBody.status).toBe(429);
    // Another client, from the same address, is not held back.
    expect((await token({ authorization: basic(other.client_id, other.client_secret) })).status).toBe(200);
  });
});
