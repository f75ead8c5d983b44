// The sign-in page when one email and password open accounts in two organizations: the server answers 409
// organization_required (packages/server/src/features/people/people.routes.ts), the page asks which, and signs in
// to the one chosen. The built dashboard in Debian's chromium, as dashboard.int.test.ts runs it.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { organization, type Person } from "./sample-data.ts";
import { fillSignIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let page: Page;
let sam: Person;

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  await server.createClient(organization, "ci");
  await server.createClient("globex", "ci");
  const people = server.app.services.people;
  const here = await people.createUser({ email: "sam@example.com", role: "member", org: organization });
  await people.createUser({ email: "sam@example.com", role: "viewer", org: "globex" });
  // Sam gives their globex account the same password.
  const inGlobex = (await people.listUsers("globex")).find((user) => user.email === "sam@example.com");
  if (!inGlobex) throw new Error("sam@example.com was not created in globex");
  await people.setPassword(inGlobex, here.password, "no session to keep");
  sam = { email: here.email, password: here.password };
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it("asks which organization when the password opens accounts in several, and signs in to the one chosen", async () => {
  await page.goto(`${server.origin}/runs`);
  await page.waitForURL(/\/sign-in/);
  await expect(page.getByLabel("Organization").count()).resolves.toBe(0);
  await fillSignIn(page, sam);
  await expect(page.getByRole("alert").textContent()).resolves.toContain(
    "You have an account with this email and password in several organizations.",
  );
  const choices = await page.getByLabel("Organization").locator("option:not([disabled])").allTextContents();
  expect(choices).toEqual([organization, "globex"].sort());
  await page.getByLabel("Organization").selectOption("globex");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${server.origin}/runs`);
  await page.getByRole("button", { name: `Signed in as ${sam.email}` }).waitFor();
  const session = await page.evaluate(() => fetch("/auth/session").then((response) => response.json()));
  expect(session.user).toEqual({ email: "sam@example.com", role: "viewer", org: "globex" });
});
