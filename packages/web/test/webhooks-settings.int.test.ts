// The webhooks section of Settings end to end, in Debian's chromium against a real server and a real receiver on
// 127.0.0.1 (the address guard lifted, as for on-premises receivers): a member adds a webhook and sees its signing
// secret once, sends a test that the receiver verifies with that secret and sees the delivery appear in the log,
// redelivers it under the same webhook-id, disables and deletes it; a viewer reads webhooks and their log with no
// controls. Needs the dashboard built first (npm run build:web).
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestReceiver } from "../../server/src/features/webhooks/test-receiver.ts";
import { startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { createMember, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let receiver: TestReceiver;
let browser: Browser;
let member: Person;
let viewer: Person;
let page: Page;
let secret: string;

const axeScript = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** What axe-core finds against WCAG 2.1 A/AA in the Webhooks section, one line per rule broken. */
async function violationsInSection(): Promise<string[]> {
  await page.addScriptTag({ path: axeScript });
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(
            context: unknown,
            options: unknown,
          ): Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(
      { include: [['section[aria-labelledby="webhooks-heading"]']] },
      { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } },
    );
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

const section = () => page.getByRole("region", { name: "Webhooks", exact: true });
const webhookItem = () => section().getByRole("listitem", { name: receiver.url, exact: true });

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" },
  });
  await server.createClient(organization, "agent");
  receiver = await TestReceiver.start();
  member = await createMember(server, "mo@example.com");
  const account = await server.app.services.people.createUser({
    email: "vi@example.com",
    role: "viewer",
    org: organization,
  });
  viewer = { email: account.email, password: account.password };
  browser = await launchChromium();
  // bypassCSP: axe-core is added to the page as a script, which the dashboard's policy would refuse.
  page = await openSignedIn(browser, server.origin, member, "/settings", { bypassCSP: true });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await server?.close();
});

describe("webhooks in the dashboard's settings", () => {
  it("shows the API's refusal of a URL it will not send to, with its fix", async () => {
    const form = section().getByRole("form", { name: "Add a webhook" });
    await form.getByLabel("URL").fill("ftp://hooks.example.com/x");
    await form.getByRole("button", { name: "Add webhook" }).click();
    const alert = form.getByRole("alert");
    await alert.getByText("The webhook URL uses ftp.").waitFor();
    await alert.getByText("Give an http:// or https:// URL.").waitFor();
    await expect(section().getByRole("listitem").count()).resolves.toBe(0);
  });

  it("adds a webhook and shows its signing secret once", async () => {
    const form = section().getByRole("form", { name: "Add a webhook" });
    await form.getByLabel("URL").fill(receiver.url);
    await form.getByRole("checkbox", { name: /execution\.started/ }).check();
    await form.getByLabel("Description (optional)").fill("deploy gate");
    await form.getByRole("button", { name: "Add webhook" }).click();

    const panel = page.getByRole("region", { name: /added: copy its signing secret now/ });
    await panel.getByText("You will not see this secret again.").waitFor();
    secret = (await panel.locator("pre").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver.secret = secret;

    await webhookItem().getByText("execution.started, execution.finished").waitFor();
    await webhookItem().getByText("enabled", { exact: true }).waitFor();
    await webhookItem().getByText("deploy gate").waitFor();

    await panel.getByRole("button", { name: "Done: I stored it" }).click();
    await expect(page.getByRole("region", { name: /copy its signing secret now/ }).count()).resolves.toBe(0);
    await page.reload();
    await webhookItem().waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it("sends a test the receiver verifies, and the delivery appears in the log", async () => {
    await webhookItem()
      .getByRole("button", { name: `Send test to ${receiver.url}` })
      .click();
    const [request] = await receiver.requests(1);
    expect(request?.verifyError).toBeUndefined();
    expect(request?.verified).toMatchObject({ type: "webhook.test" });

    const log = webhookItem().getByRole("table", { name: /Deliveries to/ });
    const row = log.getByRole("row", { name: /webhook\.test/ });
    await row.getByText("delivered after 1 attempt").waitFor();
    await row.getByText(String(request?.headers["webhook-id"])).waitFor();
    await row.getByText(/HTTP 200 in \d+ ms/).waitFor();
  });

  it("redelivers a message under the same webhook-id", async () => {
    const row = webhookItem().getByRole("row", { name: /webhook\.test/ });
    const messageId = (await receiver.requests(1))[0]?.headers["webhook-id"];
    await row.getByRole("button", { name: `Redeliver ${messageId}` }).click();
    const [, again] = await receiver.requests(2);
    expect(again?.headers["webhook-id"]).toBe(messageId);
    expect(again?.verifyError).toBeUndefined();
    await row.getByText("delivered after 2 attempts").waitFor();
  });

  it("breaks no WCAG 2.1 A/AA rule axe-core tests, with a delivery log open, light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      await webhookItem().getByRole("table").waitFor();
      expect(await violationsInSection(), colorScheme).toEqual([]);
    }
  });

  it("shows a viewer the webhooks and their log, with no controls", async () => {
    const viewerPage = await openSignedIn(browser, server.origin, viewer, "/settings");
    const readOnly = viewerPage.getByRole("region", { name: "Webhooks", exact: true });
    const item = readOnly.getByRole("listitem", { name: receiver.url, exact: true });
    await item.waitFor();
    for (const name of ["Add webhook", "Send test", "Rotate secret", "Delete", "Disable"]) {
      await expect(readOnly.getByRole("button", { name }).count(), name).resolves.toBe(0);
    }
    await item.getByRole("button", { name: `Deliveries of ${receiver.url}` }).click();
    await item.getByRole("table").getByText("delivered after 2 attempts").waitFor();
    await expect(item.getByRole("button", { name: /^Redeliver/ }).count()).resolves.toBe(0);
    await viewerPage.context().close();
  });

  it("rotates the secret (shown once, a new one), disables, enables and deletes after a confirmation", async () => {
    await webhookItem()
      .getByRole("button", { name: `Rotate secret of the webhook to ${receiver.url}` })
      .click();
    const panel = page.getByRole("region", { name: /New signing secret .*: copy it now/ });
    const rotated = (await panel.locator("pre").textContent()) ?? "";
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await panel.getByRole("button", { name: "Done: I stored it" }).click();

    await webhookItem()
      .getByRole("button", { name: `Disable the webhook to ${receiver.url}` })
      .click();
    await webhookItem().getByText("disabled", { exact: true }).waitFor();
    await webhookItem()
      .getByRole("button", { name: `Enable the webhook to ${receiver.url}` })
      .click();
    await webhookItem().getByText("enabled", { exact: true }).waitFor();

    await webhookItem()
      .getByRole("button", { name: `Delete the webhook to ${receiver.url}` })
      .click();
    await webhookItem()
      .getByRole("alertdialog", { name: `Delete the webhook to ${receiver.url}?` })
      .getByRole("button", { name: "Delete it" })
      .click();
    await section().getByText("No webhooks yet.").waitFor();
  });
});
