// The Settings page end to end, in Debian's chromium against a real server: an admin creates a CI client and sees
// its secret once (it works at the token endpoint, and a reload shows it nowhere), rotates and disables it, adds a
// person and changes their role; a member sees no admin controls, the page makes no admin call for them, and the
// API refuses them (403). Needs the dashboard built first (npm run build:web).
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalAgent } from "../../server/src/features/agent/index.ts";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { createMember, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let admin: Person;
let member: Person;
let adminContext: BrowserContext;
let page: Page;
/** The client the admin created, and its secrets: the first one, then the one after the rotation. */
let clientId: string;
let firstSecret: string;
let rotatedSecret: string;

async function openAs(person: Person, path: string): Promise<{ context: BrowserContext; page: Page }> {
  const opened = await openSignedIn(browser, server.origin, person, path);
  return { context: opened.context(), page: opened };
}

/** POST /v1/oauth/token with a client's ID and secret, as a pipeline would: the status. */
async function tokenStatus(id: string, secret: string): Promise<number> {
  const response = await call(`${server.baseUrl}/oauth/token`, {
    json: { client_id: id, client_secret: secret, audience: server.config.audience },
  });
  return response.status;
}

/** Whether the keyboard focus is inside the element `selector` finds (evaluated in the page, as text: no DOM types here). */
const focusedWithin = (selector: string): Promise<boolean> =>
  page.evaluate(`Boolean(document.activeElement?.closest(${JSON.stringify(selector)}))`);

/** What a section announced last (its aria-live status line). */
const announced = (section: "Clients" | "People") =>
  page.getByRole("region", { name: section, exact: true }).locator('[aria-live="polite"]').textContent();

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  // The organization exists as a first start makes it: through its clients, the built-in local agent's among them.
  await server.createClient(organization, "agent");
  await startLocalAgent(server.app, server.config, server.app.services.clients, server.baseUrl);
  const account = await server.app.services.people.createUser({
    email: "ada@example.com",
    role: "admin",
    org: organization,
  });
  admin = { email: account.email, password: account.password };
  member = await createMember(server, "mo@example.com");
  browser = await launchChromium();
  ({ context: adminContext, page } = await openAs(admin, "/settings"));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("settings in the dashboard", () => {
  it("names the built-in local agent's client and says what it is", async () => {
    const row = page.locator("tbody tr", { hasText: "Built-in local agent" });
    await row.getByText(/^Runs device-less steps inside the server/).waitFor();
    await expect(row.textContent()).resolves.toContain("TESTBAY_LOCAL_AGENT=false turns it off");
    await expect(row.textContent()).resolves.toMatch(/cl_\S+/);
    // A client without a name shows its ID alone, and no such line.
    const unnamed = page.locator("tbody tr", { hasNotText: "Built-in local agent" }).first();
    await expect(unnamed.textContent()).resolves.not.toContain("TESTBAY_LOCAL_AGENT");
  });

  it("creates a CI client and shows its secret once, focused, with the lines a pipeline needs", async () => {
    await page.getByRole("heading", { name: "Clients" }).waitFor();
    const form = page.getByRole("form", { name: "Create a client" });
    await form.getByLabel("Role").selectOption("ci");
    // A name the API refuses (a tab in it) is said at the field; then a good one.
    const name = form.getByLabel("Name (optional)");
    await name.fill("nightly\tCI");
    await form.getByRole("button", { name: "Create client" }).click();
    await expect.poll(() => name.getAttribute("aria-invalid")).toBe("true");
    await form.getByText(/control character/).waitFor();
    await name.fill("Nightly CI");
    await form.getByRole("button", { name: "Create client" }).click();

    const panel = page.getByRole("region", { name: /created: copy its secret now/ });
    await panel.waitFor();
    await expect.poll(() => focusedWithin("section[aria-labelledby]")).toBe(true);
    await panel.getByText("You will not see this secret again.").waitFor();
    firstSecret = (await panel.locator("[data-secret]").textContent()) ?? "";
    expect(firstSecret).toMatch(/^tbs_/);
    const lines = (await panel.locator("pre").textContent()) ?? "";
    clientId = /TESTBAY_CLIENT_ID=(\S+)/.exec(lines)?.[1] ?? "";
    expect(lines).toBe(
      [
        `TESTBAY_URL=${server.origin}/v1`,
        `TESTBAY_CLIENT_ID=${clientId}`,
        `TESTBAY_CLIENT_SECRET=${firstSecret}`,
      ].join("\n"),
    );
    await expect.poll(() => announced("Clients")).toBe(`Client ${clientId} created.`);

    // The secret works where a pipeline uses it.
    expect(await tokenStatus(clientId, firstSecret)).toBe(200);
    // The table lists the new client by its name, its ID below, enabled, as a CI client.
    const row = page.locator("tbody tr", { hasText: clientId });
    await row.getByText("enabled").waitFor();
    await row.getByText("Nightly CI", { exact: true }).waitFor();
    await expect(row.textContent()).resolves.toContain("ci");
    await expect.poll(() => name.inputValue()).toBe("");
  });

  it("never shows the secret again: not after a reload, not after leaving and coming back", async () => {
    await page.reload();
    await page.locator("tbody tr", { hasText: clientId }).waitFor();
    expect(await page.content()).not.toContain(firstSecret);
    await page.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("link", { name: "Settings" }).click();
    await page.locator("tbody tr", { hasText: clientId }).waitFor();
    expect(await page.content()).not.toContain(firstSecret);
    await expect(page.getByRole("region", { name: /copy its secret now/ }).count()).resolves.toBe(0);
  });

  it("rotates the secret after a confirmation: the new one is shown once, the old one stops working", async () => {
    await page.getByRole("button", { name: `Rotate the secret of ${clientId}` }).click();
    const confirm = page.getByRole("alertdialog", { name: `Rotate the secret of ${clientId}?` });
    await confirm.getByText("fails until it is given the new secret").waitFor();
    await expect.poll(() => focusedWithin('[role="alertdialog"]')).toBe(true);
    // Cancelling changes nothing.
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await expect(confirm.count()).resolves.toBe(0);
    await expect.poll(() => focusedWithin('form[aria-label="Create a client"]')).toBe(true);
    expect(await tokenStatus(clientId, firstSecret)).toBe(200);

    await page.getByRole("button", { name: `Rotate the secret of ${clientId}` }).click();
    await confirm.getByRole("button", { name: "Rotate now" }).click();
    const panel = page.getByRole("region", { name: `New secret of ${clientId}: copy it now` });
    await panel.waitFor();
    await expect.poll(() => focusedWithin("section[aria-labelledby]")).toBe(true);
    rotatedSecret = (await panel.locator("[data-secret]").textContent()) ?? "";
    expect(rotatedSecret).toMatch(/^tbs_/);
    expect(rotatedSecret).not.toBe(firstSecret);
    expect(await tokenStatus(clientId, firstSecret)).toBe(401);
    expect(await tokenStatus(clientId, rotatedSecret)).toBe(200);
    await panel.getByRole("button", { name: "Done: I stored it" }).click();
    await expect(panel.count()).resolves.toBe(0);
    // The keyboard is back where the section starts, not lost on the page's body.
    await expect.poll(() => focusedWithin('form[aria-label="Create a client"]')).toBe(true);
    expect(await page.content()).not.toContain(rotatedSecret);
  });

  it("disables the client (it gets no more tokens) and enables it again", async () => {
    await page.getByRole("button", { name: `Disable ${clientId}` }).click();
    const row = page.locator("tbody tr", { hasText: clientId });
    await row.getByText("disabled", { exact: true }).waitFor();
    await expect.poll(() => announced("Clients")).toBe(`Client ${clientId} disabled.`);
    expect(await tokenStatus(clientId, rotatedSecret)).toBe(401);

    await page.getByRole("button", { name: `Enable ${clientId}` }).click();
    await row.getByText("enabled", { exact: true }).waitFor();
    expect(await tokenStatus(clientId, rotatedSecret)).toBe(200);
  });

  it("adds a person (the API's message at the email field first) and shows their password once", async () => {
    const form = page.getByRole("form", { name: "Add a person" });
    const email = form.getByLabel("Email");
    await email.fill("not-an-address");
    await form.getByRole("button", { name: "Add person" }).click();
    await page.getByText("is not an email address (name@domain)").waitFor();
    await expect.poll(() => email.getAttribute("aria-invalid")).toBe("true");

    await email.fill("lee@example.com");
    await form.getByLabel("Role").selectOption("viewer");
    await form.getByRole("button", { name: "Add person" }).click();
    const panel = page.getByRole("region", { name: "lee@example.com added: give them this password now" });
    await panel.waitFor();
    await expect.poll(() => focusedWithin("section[aria-labelledby]")).toBe(true);
    await panel.getByText("You will not see this password again.").waitFor();
    const password = ((await panel.locator("pre").textContent()) ?? "").trim();
    await expect.poll(() => email.getAttribute("aria-invalid")).toBe("false");
    const signedIn = await call(`${server.origin}/auth/login`, {
      json: { email: "lee@example.com", password },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user.role).toBe("viewer");
    await page.reload();
    await page.locator("tbody tr", { hasText: "lee@example.com" }).waitFor();
    expect(await page.content()).not.toContain(password);
  });

  it("changes a person's role and disables them; the admin's own row cannot be", async () => {
    await page.getByRole("combobox", { name: "Role of lee@example.com" }).selectOption("member");
    await expect.poll(() => announced("People")).toBe("lee@example.com is now member.");
    expect((await leeIn(organization))?.role).toBe("member");

    await page.getByRole("button", { name: "Disable lee@example.com" }).click();
    await page
      .locator("tbody tr", { hasText: "lee@example.com" })
      .getByText("disabled", { exact: true })
      .waitFor();
    expect((await leeIn(organization))?.disabledAt).not.toBeNull();

    const ownRole = page.getByRole("combobox", { name: `Role of ${admin.email}` });
    const ownDisable = page.getByRole("button", { name: `Disable ${admin.email}` });
    await expect(ownRole.isDisabled()).resolves.toBe(true);
    await expect(ownDisable.isDisabled()).resolves.toBe(true);
    const reasonId = (await ownDisable.getAttribute("aria-describedby")) ?? "";
    await expect(page.locator(`[id="${reasonId}"]`).textContent()).resolves.toContain(
      "ask another administrator",
    );
    await adminContext.close();
  });

  it("shows a member no admin controls, makes no admin call for them, and the API refuses them (403)", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const memberPage = await context.newPage();
    const adminCalls: string[] = [];
    memberPage.on("request", (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith("/v1/clients") || path.startsWith("/v1/users")) adminCalls.push(path);
    });
    await memberPage.goto(`${server.origin}/settings`);
    await memberPage.waitForURL(/\/sign-in/);
    await memberPage.getByLabel("Email").fill(member.email);
    await memberPage.getByLabel("Password").fill(member.password);
    await memberPage.getByRole("button", { name: "Sign in" }).click();
    await memberPage.getByText("Settings (clients and people) are for administrators.").waitFor();
    for (const name of ["Create client", "Add person"]) {
      await expect(memberPage.getByRole("button", { name }).count(), name).resolves.toBe(0);
    }
    await expect(memberPage.getByRole("heading", { name: "Clients" }).count()).resolves.toBe(0);
    expect(adminCalls).toEqual([]);

    // The API is the guard, not the missing controls: the member's own session, CSRF token and all, gets 403.
    const session = await (await context.request.get(`${server.origin}/auth/session`)).json();
    const headers = { "x-csrf-token": session.csrf_token, origin: server.origin };
    const refusals = [
      await context.request.get(`${server.origin}/v1/users`),
      await context.request.get(`${server.origin}/v1/clients`),
      await context.request.post(`${server.origin}/v1/clients`, { headers, data: { role: "ci" } }),
      await context.request.patch(`${server.origin}/v1/users/${encodeURIComponent(member.email)}`, {
        headers,
        data: { role: "admin" },
      }),
    ];
    for (const refused of refusals) {
      expect(refused.status()).toBe(403);
      const body = await refused.json();
      expect(body).toMatchObject({ code: "forbidden", reason: "role" });
    }
    await context.close();
  });
});

/** Lee's account in the test's organization (accounts belong to an organization: people.service.ts). */
async function leeIn(org: string) {
  const people = server.app.services.people;
  const [lee] = (await people.listUsers(org)).filter((user) => user.email === "lee@example.com");
  return lee;
}
