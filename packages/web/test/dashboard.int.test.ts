// The dashboard end to end: the built dashboard (packages/web/dist) as a real server serves it, in Debian's
// chromium, against runs the embedded local agent really ran. Needs `npm run build` first (CI does it).
import { gzipSync } from "node:zlib";
import type { Browser, BrowserContext, Page, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import {
  ciHeaders,
  createMember,
  type InspectRuns,
  organization,
  type Person,
  sampleCommit,
  seedInspectRuns,
  trigger,
} from "./sample-data.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let person: Person;
let runs: InspectRuns;
let ci: Record<string, string>;

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = await ciHeaders(server);
  person = await createMember(server);
  runs = await seedInspectRuns(server, ci);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  // What went wrong in the page (an uncaught error, a failed request) shows in the test's output.
  page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") console.error(`page console: ${message.text()}`);
  });
  page.on("requestfailed", (request) =>
    console.error(`request failed: ${request.url()} ${request.failure()?.errorText}`),
  );
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(password: string) {
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

describe("the dashboard in a browser", () => {
  it("sends a person who is not signed in to the sign-in page, keeping where they were headed", async () => {
    // Every JavaScript file of the first load, to weigh the initial bundle as a browser downloads it.
    const scripts: Array<Promise<Buffer>> = [];
    const weigh = (response: Response) => {
      // A 304 (revalidated) has no body of its own: the 200 that came first was weighed.
      if (response.request().resourceType() === "script" && response.status() === 200) {
        scripts.push(response.body());
      }
    };
    page.on("response", weigh);
    await page.goto(`${server.origin}/runs/${runs.failed}`);
    await page.waitForURL(/\/sign-in\?redirect=/);
    await page.getByRole("heading", { name: "Sign in to Testbay" }).waitFor();
    page.off("response", weigh);
    const bodies = await Promise.all(scripts);
    const gzipped = bodies.reduce((sum, body) => sum + gzipSync(body).length, 0);
    expect(gzipped, "initial JavaScript, gzipped (issue 14: ≤ 250 KB)").toBeLessThanOrEqual(250 * 1024);
  });

  it("shows a wrong password at the form, and signs in with the right one to the page asked for", async () => {
    await signIn("not-the-password");
    await expect(page.getByRole("alert").textContent()).resolves.toContain(
      "The email or the password is wrong.",
    );
    await signIn(person.password);
    await page.waitForURL(`${server.origin}/runs/${runs.failed}`);
    await page.getByRole("heading", { name: /com\.example\.basic/ }).waitFor();
    await page.getByRole("button", { name: `Signed in as ${person.email}` }).waitFor();
  });

  it("shows the failed run: header, its failed test with the message, all its tests, the JUnit link", async () => {
    await page.getByRole("heading", { name: /Failed tests \(1\)/ }).waitFor();
    const failures = page.locator("section", { has: page.getByRole("heading", { name: /Failed tests/ }) });
    await expect(failures.textContent()).resolves.toMatch(/target.?sdk/i);
    await page.getByRole("heading", { name: /All tests \(\d+\)/ }).waitFor();
    await page.getByText("Release gate: target SDK").waitFor();
    await page.getByText("release/2.0").waitFor();
    const junit = await page.getByRole("link", { name: "Download JUnit XML" }).getAttribute("href");
    expect(junit).toBe(`/v1/executions/${runs.failed}/junit`);
    // The link works with the session cookie alone, as the browser would follow it.
    const response = await context.request.get(`${server.origin}${junit}`);
    expect(response.status()).toBe(200);
    expect(await response.text()).toContain("<testsuites");
  });

  it("lists both runs newest first, filters them by status in the URL, and opens one", async () => {
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.waitForURL(`${server.origin}/runs`);
    const rows = page.locator("tbody tr");
    await rows.nth(1).waitFor();
    await expect(rows.count()).resolves.toBe(2);
    await expect(rows.nth(0).textContent()).resolves.toContain(runs.failed);
    await expect(rows.nth(1).textContent()).resolves.toContain(runs.passed);
    // Each run names its test plan, linking to the plan.
    const plan = rows.nth(0).getByRole("link", { name: "Release gate: target SDK" });
    await plan.waitFor();
    await expect(plan.getAttribute("href")).resolves.toMatch(/^\/plans\/[^/]+$/);
    await rows.nth(1).getByRole("link", { name: "Smoke: manifest" }).waitFor();

    await page.getByLabel("Status").selectOption("passed");
    await page.waitForURL(`${server.origin}/runs?status=passed`);
    // The list reloads for the new filter: wait for the failed run to leave it.
    await page.locator("tbody tr", { hasText: runs.failed }).waitFor({ state: "detached" });
    await page.locator("tbody tr", { hasText: runs.passed }).waitFor();
    await expect(page.locator("tbody tr").count()).resolves.toBe(1);
    await page
      .locator("tbody tr")
      .first()
      .getByRole("link", { name: /com\.example\.basic/ })
      .click();
    await page.waitForURL(`${server.origin}/runs/${runs.passed}`);
    await page.getByRole("heading", { name: /All tests \(2\)/ }).waitFor();
    await page.getByText("No test failed.").waitFor();
    await page.getByLabel("Search tests").fill("no test has this name");
    await page.getByText("No test matches the search.").waitFor();
  });

  it("names an archived plan's runs by its name and says it is archived; a plan purged by its ID", async () => {
    await page.goto(`${server.origin}/runs`);
    const smoke = page
      .locator("tbody tr", { hasText: runs.passed })
      .getByRole("link", { name: "Smoke: manifest" });
    const planId = (await smoke.getAttribute("href"))?.split("/").pop() ?? "";
    const archived = await call(`${server.baseUrl}/testplans/${planId}/archive`, {
      method: "POST",
      headers: ci,
    });
    expect(archived.status).toBe(200);
    // The names come from the plans list (active and archived): no call per plan, which would spend a person's
    // rate limit on a page of 25 runs.
    const lookups: string[] = [];
    const countLookups = (request: { url(): string }) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith("/v1/testplans/")) lookups.push(path);
    };
    page.on("request", countLookups);
    await page.goto(`${server.origin}/runs`);
    const row = page.locator("tbody tr", { hasText: runs.passed });
    // On a phone the plan rides under the run's name too (hidden here): the visible one is the column's.
    await row.getByText("(archived)").filter({ visible: true }).waitFor();
    await page
      .locator("tbody tr", { hasText: runs.failed })
      .getByRole("link", { name: "Release gate: target SDK" })
      .waitFor();
    page.off("request", countLookups);
    expect(lookups).toEqual([]);
    await row.getByRole("link", { name: "Smoke: manifest" }).click();
    await page.getByRole("heading", { name: "Smoke: manifest" }).waitFor();

    // A plan the server no longer has (deleted plans are purged after 30 days; runs outlive them, migration
    // 0004): its runs show its ID, not a blank.
    // Not in the list, it is read on its own: once, though the page shows it twice (the phone's line is hidden).
    await server.app.services.database.db.deleteFrom("test_plans").where("id", "=", planId).execute();
    page.on("request", countLookups);
    await page.goto(`${server.origin}/runs`);
    await page
      .locator("tbody tr", { hasText: runs.passed })
      .getByText(`removed plan ${planId}`)
      .filter({ visible: true })
      .waitFor();
    page.off("request", countLookups);
    expect(lookups).toEqual([`/v1/testplans/${planId}`]);
  });

  it("follows a run link the CLI printed before the dashboard (/executions/ID) to the run's page", async () => {
    await page.goto(`${server.origin}/executions/${runs.failed}`);
    await page.waitForURL(`${server.origin}/runs/${runs.failed}`);
    await page.getByRole("heading", { name: /Failed tests/ }).waitFor();
  });

  it("filters by an app's version and by commit, both kept in the URL", async () => {
    await page.goto(`${server.origin}/runs`);
    await expect(page.getByLabel("Version").isDisabled()).resolves.toBe(true);
    await page.getByLabel("App").selectOption("com.example.basic");
    await page.getByLabel("Version").locator("option", { hasText: "1.2.3" }).waitFor({ state: "attached" });
    await page.getByLabel("Version").selectOption("1.2.3");
    await page.waitForURL(`${server.origin}/runs?app=com.example.basic&version=1.2.3`);
    await page.locator("tbody tr").nth(1).waitFor();

    await page.getByLabel("Commit").fill("0000000000000000000000000000000000000000");
    await page.getByLabel("Commit").press("Enter");
    await page.waitForURL(/commit=0000000000000000000000000000000000000000/);
    await page.locator("tbody tr").first().waitFor({ state: "detached" });

    await page.getByLabel("Commit").fill(sampleCommit);
    await page.getByLabel("Commit").press("Enter");
    await page.waitForURL(new RegExp(`commit=${sampleCommit}`));
    await page.locator("tbody tr").nth(1).waitFor();
    await expect(page.locator("tbody tr").count()).resolves.toBe(2);
  });

  it("shows the agents and their devices", async () => {
    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByRole("heading", { name: "local", exact: true }).waitFor();
    await page.getByText("online").first().waitFor();
  });

  it("says who triggered a run: a named client by its name with its ID below, an unnamed one by its ID", async () => {
    await page.goto(`${server.origin}/runs/${runs.failed}`);
    const unnamed = page.locator("dt", { hasText: "Triggered by" }).locator("+ dd");
    await unnamed.getByText(/^cl_/).waitFor();
    await expect(unnamed.textContent()).resolves.toMatch(/^client cl_\S+$/);

    const clients = server.app.services.clients;
    const nightly = await clients.createClient(organization, "ci", undefined, "Nightly CI");
    const plans = await call(`${server.baseUrl}/testplans?package_name=com.example.basic`, { headers: ci });
    const plan = (plans.body.items as Array<{ id: string; name: string }>).find(
      (item) => item.name === "Release gate: target SDK",
    );
    const run = await trigger(
      server,
      { "x-api-key": await server.token(nightly) },
      plan?.id ?? "",
      "nightly",
    );
    await page.goto(`${server.origin}/runs/${run}`);
    const named = page.locator("dt", { hasText: "Triggered by" }).locator("+ dd");
    await named.getByText("Nightly CI", { exact: true }).waitFor();
    await named.getByText(nightly.client_id, { exact: true }).waitFor();
  });

  it("signs out: the session ends and the pages lead to the sign-in page again", async () => {
    await page.getByRole("button", { name: `Signed in as ${person.email}` }).click();
    await page.getByRole("menuitem", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in/);
    const session = await context.request.get(`${server.origin}/auth/session`);
    expect(await session.json()).toEqual({ signed_in: false });
    await page.goto(`${server.origin}/agents`);
    await page.waitForURL(/\/sign-in\?redirect=%2Fagents/);
  });
});

describe("the server around the dashboard", () => {
  it("answers a deep link with the dashboard's page, and an unknown API path with its JSON 404", async () => {
    const deep = await fetch(`${server.origin}/runs/${runs.passed}`, { headers: { accept: "text/html" } });
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain('<div id="root">');
    const api = await call(`${server.baseUrl}/no-such-endpoint`, { headers: { accept: "text/html" } });
    expect(api.status).toBe(404);
    expect(api.body.code).toBe("route_not_found");
  });
});
