// The test plans pages end to end, in Debian's chromium against a real server: a member creates a plan through
// the form (the API's validation messages shown at their fields, then fixed), triggers it on an uploaded version
// and lands on the new run; a viewer sees no buttons that change things, and the API refuses their trigger.
// Needs the dashboard built first (npm run build:web).
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalAgent } from "../../server/src/features/agent/index.ts";
import { registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, organization, type Person } from "./sample-data.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let member: Person;
let viewer: Person;
let memberContext: BrowserContext;
let page: Page;
let planUrl: string;
let runUrl: string;

async function openAs(person: Person, path: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const opened = await context.newPage();
  opened.on("pageerror", (error) => console.error(`page error: ${error.message}`));
  await opened.goto(`${server.origin}${path}`);
  await opened.waitForURL(/\/sign-in/);
  await opened.getByLabel("Email").fill(person.email);
  await opened.getByLabel("Password").fill(person.password);
  await opened.getByRole("button", { name: "Sign in" }).click();
  await opened.waitForURL(`${server.origin}${path}`);
  return { context, page: opened };
}

/** The messages shown for a field: the text of what its aria-describedby names. */
async function messagesOf(field: ReturnType<Page["getByLabel"]>): Promise<string> {
  const ids = (await field.getAttribute("aria-describedby"))?.split(" ") ?? [];
  const texts = await Promise.all(
    ids.map(async (id) => {
      const described = page.locator(`[id="${id}"]`);
      return (await described.count()) > 0 ? ((await described.textContent()) ?? "") : "";
    }),
  );
  return texts.join(" ");
}

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  const ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  await startLocalAgent(server.app, server.config, server.app.services.clients, server.baseUrl);
  member = await createMember(server, "mira@example.com");
  const account = await server.app.services.people.createUser({
    email: "vic@example.com",
    role: "viewer",
    org: organization,
  });
  viewer = { email: "vic@example.com", password: account.password };
  browser = await launchChromium();
  ({ context: memberContext, page } = await openAs(member, "/plans"));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("test plans in the dashboard", () => {
  it("lists no plans yet, and offers a member to create one", async () => {
    await page.getByRole("heading", { name: "Test plans" }).waitFor();
    await page.getByText("No active test plans.").waitFor();
    await page.getByRole("link", { name: "New test plan" }).click();
    await page.waitForURL(`${server.origin}/plans/new`);
  });

  it("shows the API's validation messages at their fields, and saves once they are fixed", async () => {
    await page.getByLabel("Name").fill("Checkout smoke");
    await page.getByRole("button", { name: "Add a device" }).click();
    await page.getByLabel("Device 1 platform").selectOption("ios");
    const timeout = page.getByLabel("Timeout (seconds)");
    await timeout.fill("5");
    await page.getByRole("button", { name: "Create plan" }).click();

    // Below the API's minimum: the message is the timeout field's own.
    await page.locator('[aria-invalid="true"]').first().waitFor();
    await expect(timeout.getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(messagesOf(timeout)).resolves.toMatch(/>= 30/);
    await page.getByText("see the messages at the fields below").waitFor();

    // Fixed; now the device's platform is not the app's: said at that device row's platform.
    await timeout.fill("600");
    await page.getByRole("button", { name: "Create plan" }).click();
    const platform = page.getByLabel("Device 1 platform");
    await page.getByText("must be android, the app's platform").waitFor();
    await expect(platform.getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(messagesOf(platform)).resolves.toContain("must be android, the app's platform");
    await expect(timeout.getAttribute("aria-invalid")).resolves.toBe("false");

    await platform.selectOption("android");
    await page.getByLabel("Device 1 model").fill("Pixel 8");
    await page.getByRole("button", { name: "Create plan" }).click();
    // The plan's own page (not /plans/new, which the URL was a moment ago).
    await page.getByRole("heading", { name: "Checkout smoke" }).waitFor();
    planUrl = page.url();
    expect(planUrl).toMatch(/\/plans\/(?!new$)[^/]+$/);
    await page.getByText("Pixel 8").first().waitFor();
  });

  it("lists the new plan with its steps", async () => {
    await page.getByRole("link", { name: "Test plans" }).click();
    const row = page.locator("tbody tr", { hasText: "Checkout smoke" });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("inspect");
    await row.getByRole("link").click();
    await page.waitForURL(planUrl);
  });

  it("triggers the plan on an uploaded version and opens the new run, which a member cancels and re-runs", async () => {
    await expect(page.getByLabel(/Version of com\.example\.basic/).inputValue()).resolves.toBe("1.2.3");
    await page.getByRole("button", { name: "Trigger", exact: true }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    runUrl = page.url();
    await page.getByRole("heading", { name: /com\.example\.basic/ }).waitFor();
    // No agent has a Pixel 8: the run waits, and a member can cancel it.
    await page.getByText(/Waiting: /).waitFor();
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.locator("header").getByText("cancelled", { exact: true }).waitFor();
    await expect(page.getByRole("button", { name: "Cancel run" }).count()).resolves.toBe(0);

    // Re-run: the same plan on the same version, a new run.
    await page.getByRole("button", { name: "Re-run" }).click();
    await page.waitForURL((url) => /\/runs\/[^/]+$/.test(url.pathname) && url.href !== runUrl);
    await page.locator("header").getByText("queued", { exact: true }).waitFor();
    await page.getByText("1.2.3").first().waitFor();
  });

  it("edits the plan: the form comes filled in, and the change shows on the plan's page", async () => {
    await page.goto(planUrl);
    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByRole("heading", { name: "Edit Checkout smoke" }).waitFor();
    await expect(page.getByLabel("Device 1 model").inputValue()).resolves.toBe("Pixel 8");
    await expect(page.getByLabel("Timeout (seconds)").inputValue()).resolves.toBe("600");
    await page.getByLabel("Timeout (seconds)").fill("900");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(planUrl);
    await page.getByText("15 m 00 s").waitFor();
  });

  it("archives the plan (no trigger then) and restores it", async () => {
    await page.goto(planUrl);
    await page.getByRole("button", { name: "Archive" }).click();
    await page.getByText("archived", { exact: true }).waitFor();
    await expect(page.getByRole("button", { name: "Trigger", exact: true }).count()).resolves.toBe(0);
    await page.getByRole("button", { name: "Restore" }).click();
    await page.getByRole("button", { name: "Trigger", exact: true }).waitFor();
  });

  it("deletes the plan softly (restorable for 30 days, listed under deleted) and restores it", async () => {
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByText("This plan is deleted. It can be restored until").waitFor();
    await page.getByRole("link", { name: "Test plans" }).click();
    await page.getByText("No active test plans.").waitFor();
    await page.getByLabel("State").selectOption("deleted");
    await page.locator("tbody tr", { hasText: "Checkout smoke" }).getByRole("link").click();
    await page.getByRole("button", { name: "Restore" }).click();
    await page.getByRole("button", { name: "Trigger", exact: true }).waitFor();
  });

  it("shows a viewer no trigger, edit or re-run buttons, and the API refuses the viewer's trigger (403)", async () => {
    const path = new URL(planUrl).pathname;
    const { context, page: viewerPage } = await openAs(viewer, path);
    await viewerPage.getByRole("heading", { name: "Checkout smoke" }).waitFor();
    await viewerPage.getByRole("heading", { name: /Steps \(1\)/ }).waitFor();
    for (const name of ["Trigger", "Edit", "Archive", "Delete"]) {
      await expect(viewerPage.getByRole("button", { name, exact: true }).count(), name).resolves.toBe(0);
    }
    await expect(viewerPage.getByRole("link", { name: "Edit" }).count()).resolves.toBe(0);
    await viewerPage.getByRole("link", { name: "Test plans" }).click();
    await viewerPage.locator("tbody tr", { hasText: "Checkout smoke" }).waitFor();
    await expect(viewerPage.getByRole("link", { name: "New test plan" }).count()).resolves.toBe(0);
    await viewerPage.goto(runUrl);
    await viewerPage.getByRole("heading", { name: /com\.example\.basic/ }).waitFor();
    await expect(viewerPage.getByRole("button", { name: "Re-run" }).count()).resolves.toBe(0);
    await expect(viewerPage.getByRole("button", { name: "Cancel run" }).count()).resolves.toBe(0);

    // The API is the guard, not the missing button: the viewer's own session, CSRF token and all, gets 403.
    const session = await (await context.request.get(`${server.origin}/auth/session`)).json();
    const planId = path.split("/").pop();
    const refused = await context.request.post(`${server.origin}/v1/testplan/run/batch`, {
      headers: { "x-csrf-token": session.csrf_token, origin: server.origin },
      data: { package_name: "com.example.basic", version: "1.2.3", test_plan_ids: [planId] },
    });
    expect(refused.status()).toBe(403);
    const body = await refused.json();
    expect(body.code).toBe("forbidden");
    expect(body.reason).not.toBe("csrf");
    await context.close();
    await memberContext.close();
  });
});
