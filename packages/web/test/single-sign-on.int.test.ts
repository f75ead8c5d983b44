// Single sign-on in the browser: the dashboard's "Sign in with single sign-on" button, through a real OpenID
// provider (oidc-provider on 127.0.0.1, which signs in the account the test names without a form of its own) and
// back to the page the person asked for, signed in with the role the provider's claim gives. Needs the dashboard
// built first (npm run build:web).
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { listenOidcProvider, type TestOidcProvider } from "../../server/test/oidc-provider.ts";
import { launchChromium } from "./browser.ts";
import { organization } from "./sample-data.ts";
import { requireWebBuild } from "./web-build.ts";

const clientSecret = "oidc-browser-test-secret-0123456789";
const accounts = {
  ann: { email: "ann@sso.example", email_verified: true },
  boss: { email: "boss@sso.example", email_verified: true, testbay_role: "admin" },
};
let loginAs: keyof typeof accounts = "ann";

let server: TestServer;
let provider: TestOidcProvider;
let browser: Browser;

beforeAll(async () => {
  requireWebBuild();
  provider = await listenOidcProvider();
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_OIDC_ISSUER: provider.issuer,
      TESTBAY_OIDC_CLIENT_ID: "testbay",
      TESTBAY_OIDC_CLIENT_SECRET: clientSecret,
      TESTBAY_OIDC_ORG: organization,
      TESTBAY_OIDC_ROLE_CLAIM: "testbay_role",
    },
  });
  await server.createClient(organization, "ci");
  provider.serve({
    redirectUri: `${server.origin}/auth/oidc/callback`,
    clientId: "testbay",
    clientSecret,
    accounts,
    loginAs: () => loginAs,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await provider?.close();
});

describe("single sign-on in the browser", () => {
  it("signs a new person in through the provider and brings them to the page they asked for", async () => {
    loginAs = "ann";
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.origin}/agents`);
    await page.waitForURL(/\/sign-in/);
    await page.getByRole("link", { name: "Sign in with single sign-on" }).click();
    await page.waitForURL(`${server.origin}/agents`);
    await page.getByRole("button", { name: "Signed in as ann@sso.example" }).waitFor();
    const session = await page.evaluate(() => fetch("/auth/session").then((response) => response.json()));
    expect(session.user).toEqual({ email: "ann@sso.example", role: "viewer", org: organization });
    await context.close();
  });

  it("gives the role the provider's claim names", async () => {
    loginAs = "boss";
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.origin}/sign-in`);
    await page.getByRole("link", { name: "Sign in with single sign-on" }).click();
    await page.waitForURL(`${server.origin}/runs`);
    const session = await page.evaluate(() => fetch("/auth/session").then((response) => response.json()));
    expect(session.user.role).toBe("admin");
    await context.close();
  });

  it("says at the sign-in page why a single sign-on did not work, and what to do", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Where the server's callback sends a person whose provider refused or who cancelled.
    await page.goto(`${server.origin}/sign-in?error=access_denied`);
    await page.getByText("Single sign-on was cancelled at your identity provider.").waitFor();
    const signedOut = await call(`${server.origin}/auth/session`);
    expect(signedOut.body).toMatchObject({ signed_in: false, oidc: true });
    await context.close();
  });
});
