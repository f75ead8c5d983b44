import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

/**
 * Single sign-on (API.md §10) against a real OpenID provider (oidc-provider) listening on 127.0.0.1 in this
 * process. Its login and consent pages are replaced by a handler that signs in whichever account the test
 * names, so the flow is driven with fetch, one redirect at a time, as a browser follows them. In the scaled
 * project the start and the callback may reach different instances: the pending sign-in must survive that.
 */

const clientSecret = "oidc-test-client-secret-0123456789";

/** The provider's accounts: claims by account ID. */
const accounts: Record<string, Record<string, unknown>> = {
  ann: { email: "ann@sso.example", email_verified: true },
  boss: { email: "boss@sso.example", email_verified: true, testbay_role: "admin" },
  unverified: { email: "eve@sso.example", email_verified: false },
  // People with local accounts (created in beforeAll); the provider capitalises one address differently.
  local: { email: "Local@ACME.example", email_verified: true },
  gone: { email: "gone@acme.example", email_verified: true },
};
/** Who the provider signs in at its next login step. */
let loginAs = "ann";

let server: TestServer;
let unconfigured: TestServer;
let providerServer: http.Server;
let issuer: string;

beforeAll(async () => {
  // The provider's address must be known before the server is configured with it, and the server's before
  // the provider registers its callback: listen first, hand the requests to the provider once it exists.
  let handle: http.RequestListener = (_req, res) => res.writeHead(503).end();
  providerServer = http.createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => providerServer.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(providerServer.address() as AddressInfo).port}`;

  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_OIDC_ISSUER: issuer,
      TESTBAY_OIDC_CLIENT_ID: "testbay",
      TESTBAY_OIDC_CLIENT_SECRET: clientSecret,
      TESTBAY_OIDC_ORG: "acme",
      TESTBAY_OIDC_ROLE_CLAIM: "testbay_role",
    },
  });
  await server.createClient("acme", "ci");
  await server.createClient("other", "ci");
  const people = server.app.services.people;
  await people.createUser({ email: "local@acme.example", role: "member", org: "other" });
  await people.createUser({ email: "gone@acme.example", role: "viewer", org: "acme" });
  await people.disableUser("gone@acme.example");

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: "testbay",
        client_secret: clientSecret,
        redirect_uris: [`${server.origin}/auth/oidc/callback`],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    findAccount: (_ctx, id) => {
      const claims = accounts[id];
      return claims && { accountId: id, claims: () => ({ sub: id, ...claims }) };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["testbay_role"] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    cookies: { keys: ["oidc-test-cookie-key"] },
    // Set only to keep the provider from noting its defaults on every run.
    ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600 },
  });
  const providerCallback = provider.callback();
  handle = (req, res) => {
    if (!req.url?.startsWith("/interaction/")) return void providerCallback(req, res);
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === "login") {
        await provider.interactionFinished(req, res, { login: { accountId: loginAs } });
        return;
      }
      const grant = new provider.Grant({
        accountId: String(details.session?.accountId),
        clientId: String(details.params.client_id),
      });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId } },
        { mergeWithLastSubmission: true },
      );
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  };

  unconfigured = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await unconfigured?.close();
  await new Promise((resolve) => providerServer?.close(resolve));
});

/** A browser's cookies, one jar per site (both listen on 127.0.0.1, and a real browser keeps them apart by name). */
class Jar {
  private readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  take(setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const gone = attributes.some((a) => /^\s*max-age=0$/i.test(a)) || pair.slice(at + 1) === "";
      if (gone) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(at + 1));
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

interface Hop {
  status: number;
  location: string | null;
  setCookies: string[];
  body: string;
}

/**
 * One GET on a new connection (no keep-alive): the scaled project's proxy hands each connection to the next
 * instance, so the server's consecutive hops (the start, then the callback) reach different instances.
 */
function get(url: URL, cookie: string): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, headers: cookie ? { cookie } : {} }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          location: response.headers.location ?? null,
          setCookies: response.headers["set-cookie"] ?? [],
          body,
        }),
      );
    });
    request.on("error", reject);
  });
}

interface Outcome {
  /** Where the server finally sent the browser (a path, with its query). */
  location: string;
  /** The server's cookies afterwards. */
  jar: Jar;
}

/**
 * Follows the flow from GET /auth/oidc/start to the server's last redirect. `atCallback` may change the
 * provider's answer before it reaches the server, as an attacker would; `jar` is the browser's server cookies.
 */
async function signInThroughProvider(
  account: string,
  options: { next?: string; atCallback?: (url: URL) => URL; jar?: Jar } = {},
): Promise<Outcome> {
  loginAs = account;
  const serverJar = options.jar ?? new Jar();
  const providerJar = new Jar();
  const query = options.next === undefined ? "" : `?next=${encodeURIComponent(options.next)}`;
  let url = new URL(`${server.origin}/auth/oidc/start${query}`);
  for (let hop = 0; hop < 15; hop++) {
    const jar = url.origin === issuer ? providerJar : serverJar;
    const response = await get(url, jar.header());
    jar.take(response.setCookies);
    const location = response.location;
    if (location === null) {
      throw new Error(`${url.pathname} answered ${response.status} without a redirect: ${response.body}`);
    }
    const next = new URL(location, url);
    const fromServer = url.origin !== issuer;
    if (fromServer && url.pathname === "/auth/oidc/callback") {
      return { location: location, jar: serverJar };
    }
    if (fromServer && url.pathname === "/auth/oidc/start" && next.origin !== issuer) {
      return { location, jar: serverJar };
    }
    url = next.pathname === "/auth/oidc/callback" && options.atCallback ? options.atCallback(next) : next;
  }
  throw new Error("the sign-in did not end within 15 redirects");
}

const sessionOf = (jar: Jar) =>
  call(`${server.origin}/auth/session`, {
    headers: { cookie: `testbay_session=${jar.get("testbay_session")}` },
  });

describe("signing in through the OpenID provider", () => {
  it("creates a new person with the default role in TESTBAY_OIDC_ORG, signed in, back at /runs", async () => {
    const { location, jar } = await signInThroughProvider("ann");
    expect(location).toBe("/runs");
    const session = await sessionOf(jar);
    expect(session.body).toMatchObject({
      signed_in: true,
      user: { email: "ann@sso.example", role: "viewer", org: "acme" },
    });
    const runs = await call(`${server.baseUrl}/executions`, {
      headers: { cookie: `testbay_session=${jar.get("testbay_session")}` },
    });
    expect(runs.status, JSON.stringify(runs.body)).toBe(200);
    // The pending sign-in is used up: its cookie is gone.
    expect(jar.get("testbay_oidc")).toBeUndefined();
  });

  it("signs the same person in again without creating another", async () => {
    const { jar } = await signInThroughProvider("ann");
    expect((await sessionOf(jar)).body.user).toEqual({
      email: "ann@sso.example",
      role: "viewer",
      org: "acme",
    });
    const acme = await server.app.services.people.listUsers("acme");
    expect(acme.filter((person) => person.email === "ann@sso.example")).toHaveLength(1);
  });

  it("gives the role the configured claim names", async () => {
    const { location, jar } = await signInThroughProvider("boss");
    expect(location).toBe("/runs");
    expect((await sessionOf(jar)).body.user).toEqual({
      email: "boss@sso.example",
      role: "admin",
      org: "acme",
    });
  });

  it("signs an existing account in by its email, keeping its organization and role", async () => {
    const { location, jar } = await signInThroughProvider("local");
    expect(location).toBe("/runs");
    expect((await sessionOf(jar)).body.user).toEqual({
      email: "local@acme.example",
      role: "member",
      org: "other",
    });
  });

  it("keeps `next`, a path on this site", async () => {
    const { location, jar } = await signInThroughProvider("ann", { next: "/runs/exe_123?tab=logs" });
    expect(location).toBe("/runs/exe_123?tab=logs");
    expect((await sessionOf(jar)).body.signed_in).toBe(true);
  });

  it.each([
    "//evil.example/x",
    "/\\evil.example",
    "https://evil.example/",
    "javascript:alert(1)",
    "/\t/evil.example",
  ])("does not leave the site for next=%j: /runs instead", async (next) => {
    const { location } = await signInThroughProvider("ann", { next });
    expect(location).toBe("/runs");
  });
});

describe("refusals go back to the sign-in page with a code", () => {
  it("refuses an email the provider has not verified, and signs nobody in", async () => {
    const { location, jar } = await signInThroughProvider("unverified");
    expect(location).toBe("/sign-in?error=email_not_verified");
    expect(jar.get("testbay_session")).toBeUndefined();
    expect(await server.app.services.people.listUsers("acme")).not.toContainEqual(
      expect.objectContaining({ email: "eve@sso.example" }),
    );
  });

  it("refuses a disabled account", async () => {
    const { location, jar } = await signInThroughProvider("gone");
    expect(location).toBe("/sign-in?error=account_disabled");
    expect(jar.get("testbay_session")).toBeUndefined();
  });

  it("refuses an answer whose state is not the one this browser's sign-in sent", async () => {
    const { location, jar } = await signInThroughProvider("ann", {
      atCallback: (url) => {
        url.searchParams.set("state", "forged-state");
        return url;
      },
    });
    expect(location).toBe("/sign-in?error=invalid_state");
    expect(jar.get("testbay_session")).toBeUndefined();
  });

  it("refuses a callback that comes without the browser's pending sign-in (a code meant for another browser)", async () => {
    const start = await fetch(`${server.origin}/auth/oidc/start`, { redirect: "manual" });
    const state = new URL(String(start.headers.get("location"))).searchParams.get("state");
    // The state is right, but this request does not carry the cookie of the browser that started.
    const replay = await fetch(`${server.origin}/auth/oidc/callback?code=abc&state=${state}`, {
      redirect: "manual",
    });
    expect(replay.status).toBe(302);
    expect(replay.headers.get("location")).toBe("/sign-in?error=invalid_state");
    expect(replay.headers.getSetCookie().join("\n")).not.toContain("testbay_session=");
  });

  it("reports the person's refusal at the provider as access_denied", async () => {
    const jar = new Jar();
    const start = await fetch(`${server.origin}/auth/oidc/start`, { redirect: "manual" });
    jar.take(start.headers.getSetCookie());
    const state = new URL(String(start.headers.get("location"))).searchParams.get("state");
    const refused = await fetch(
      `${server.origin}/auth/oidc/callback?error=access_denied&state=${state}&iss=${encodeURIComponent(issuer)}`,
      { redirect: "manual", headers: { cookie: jar.header() } },
    );
    expect(refused.status).toBe(302);
    expect(refused.headers.get("location")).toBe("/sign-in?error=access_denied");
  });
});

describe("whether single sign-on is on", () => {
  it("says so to a signed-out browser", async () => {
    expect((await call(`${server.origin}/auth/session`)).body).toEqual({ signed_in: false, oidc: true });
    expect((await call(`${unconfigured.origin}/auth/session`)).body).toEqual({ signed_in: false });
  });

  it("answers 404 with the variables to set when it is not configured", async () => {
    for (const path of ["/auth/oidc/start?next=/runs", "/auth/oidc/callback?code=x&state=y"]) {
      const response = await call(`${unconfigured.origin}${path}`);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: "oidc_not_configured" });
      expect(response.body.fix).toContain("TESTBAY_OIDC_ISSUER");
    }
  });

  it("never logs the client secret", () => {
    expect(server.logs.join("\n")).not.toContain(clientSecret);
  });
});
