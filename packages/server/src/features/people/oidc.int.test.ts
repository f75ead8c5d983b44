import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { listenOidcProvider, type TestOidcProvider } from "../../../test/oidc-provider.ts";

/**
 * Single sign-on (API.md §10) against a real OpenID provider (test/oidc-provider.ts) listening on 127.0.0.1 in
 * this process, which signs in whichever account the test names; the flow is driven one redirect at a time, as a
 * browser follows them (packages/web/test/single-sign-on.int.test.ts follows them in a browser). In the scaled
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
  // A viewer with a local account whose provider now says admin.
  promoted: { email: "promo@acme.example", email_verified: true, testbay_role: "admin" },
};
/** Who the provider signs in at its next login step. */
let loginAs = "ann";

let server: TestServer;
let unconfigured: TestServer;
let provider: TestOidcProvider;
let issuer: string;

beforeAll(async () => {
  provider = await listenOidcProvider();
  issuer = provider.issuer;
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
  await people.createUser({ email: "local@acme.example", role: "member", org: "acme" });
  // The same email's account in another organization is not the one the provider signs in (TESTBAY_OIDC_ORG).
  await people.createUser({ email: "local@acme.example", role: "admin", org: "other" });
  await people.createUser({ email: "gone@acme.example", role: "viewer", org: "acme" });
  await people.disableUser("gone@acme.example");
  await people.createUser({ email: "promo@acme.example", role: "viewer", org: "acme" });
  provider.serve({
    redirectUri: `${server.origin}/auth/oidc/callback`,
    clientId: "testbay",
    clientSecret,
    accounts,
    loginAs: () => loginAs,
  });

  unconfigured = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await unconfigured?.close();
  await provider?.close();
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

  it("signs the configured organization's account with that email in, keeping its role", async () => {
    const { location, jar } = await signInThroughProvider("local");
    expect(location).toBe("/runs");
    expect((await sessionOf(jar)).body.user).toEqual({
      email: "local@acme.example",
      role: "member",
      org: "acme",
    });
  });

  it("changes an existing person's role when the claim names another, and the audit log says who and why", async () => {
    const { jar } = await signInThroughProvider("promoted");
    expect((await sessionOf(jar)).body.user).toEqual({
      email: "promo@acme.example",
      role: "admin",
      org: "acme",
    });
    const admin = { "x-api-key": await server.token(await server.createClient("acme", "admin")) };
    const audit = await call(`${server.baseUrl}/audit`, { headers: admin });
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({
        action: "user.role_changed",
        actor: { type: "server", id: "single-sign-on" },
        target: { type: "user", id: "promo@acme.example" },
        details: { role: "admin", previous_role: "viewer" },
      }),
    );
    // Signing in again with the same claim changes nothing, and says nothing more.
    await signInThroughProvider("promoted");
    const again = await call(`${server.baseUrl}/audit`, { headers: admin });
    const changes = (again.body.items as { action: string; target: { id: string } }[]).filter(
      (event) => event.action === "user.role_changed" && event.target.id === "promo@acme.example",
    );
    expect(changes).toHaveLength(1);
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
