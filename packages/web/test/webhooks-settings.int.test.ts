// The webhooks section of Settings end to end, in Debian's chromium against a real server and a real receiver on
// 127.0.0.1 (the address guard lifted, as for on-premises receivers): a member adds a webhook and sees its signing
// secret once, sends a test that the receiver verifies with that secret and sees the delivery appear in the log,
// redelivers it under the same webhook-id, edits its URL and events in place, opens a delivery on the request it
// sent (the headers the receiver got), disables and deletes it; a webhook whose receiver refuses everything shows
// as failing; a viewer reads webhooks and their log with no controls. Needs the dashboard built first (npm run build:web).
import { createRequire } from "node:module";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestReceiver } from "../../server/src/features/webhooks/test-receiver.ts";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let receiver: TestReceiver;
let browser: Browser;
let member: Person;
let viewer: Person;
let page: Page;
let secret: string;
/** Where the webhook posts: the receiver, then (after the edit) another path of it. */
let webhookUrl: string;

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

/** Whether the element has the keyboard's focus. */
const focused = (locator: Locator) => locator.evaluate((element) => element === document.activeElement);

const section = () => page.getByRole("region", { name: "Webhooks", exact: true });
const webhookItem = () => section().getByRole("listitem", { name: webhookUrl, exact: true });

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" },
  });
  await server.createClient(organization, "agent");
  receiver = await TestReceiver.start();
  webhookUrl = receiver.url;
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
      .getByRole("button", { name: `Send test to ${webhookUrl}` })
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

  it("edits a webhook's URL and events in place: the focus goes to the form and back, a refusal shows at its field", async () => {
    const editButton = () => webhookItem().getByRole("button", { name: `Edit the webhook to ${webhookUrl}` });
    const form = section().getByRole("form", { name: `Edit the webhook to ${receiver.url}` });
    const url = form.getByLabel("URL");
    await editButton().click();
    await expect(focused(url)).resolves.toBe(true);
    await expect(url.inputValue()).resolves.toBe(receiver.url);
    await expect(form.getByLabel("Description (optional)").inputValue()).resolves.toBe("deploy gate");
    await expect(form.getByRole("checkbox", { name: /execution\.started/ }).isChecked()).resolves.toBe(true);
    await expect(form.getByRole("checkbox", { name: /version\.uploaded/ }).isChecked()).resolves.toBe(false);
    // PATCH has no format: the form says what it is and that it stays.
    await form.getByText("Standard Webhooks (signed JSON)").waitFor();
    await form.getByText(/^Not editable/).waitFor();
    await expect(form.getByRole("combobox").count()).resolves.toBe(0);

    // Escape leaves it as it was, and gives the focus back to its Edit button.
    await url.fill("https://elsewhere.example.com/");
    await page.keyboard.press("Escape");
    await expect(form.count()).resolves.toBe(0);
    await expect(focused(editButton())).resolves.toBe(true);
    await webhookItem().getByText("deploy gate").waitFor();

    // From the keyboard again; the API's refusal shows under the URL, which is marked and takes the focus.
    await page.keyboard.press("Enter");
    await expect(focused(url)).resolves.toBe(true);
    await url.fill("ftp://hooks.example.com/x");
    await form.getByRole("button", { name: "Save changes" }).click();
    const alert = form.getByRole("alert");
    await alert.getByText("The webhook URL uses ftp.").waitFor();
    await alert.getByText("Give an http:// or https:// URL.").waitFor();
    await expect(url.getAttribute("aria-invalid")).resolves.toBe("true");
    const description = await url.evaluate((input) =>
      (input.getAttribute("aria-describedby") ?? "")
        .split(" ")
        .map((id) => document.getElementById(id)?.textContent)
        .join(" "),
    );
    expect(description).toContain("The webhook URL uses ftp.");
    await expect(focused(url)).resolves.toBe(true);

    const edited = `${receiver.url}/v2`;
    await url.fill(edited);
    await form.getByRole("checkbox", { name: /execution\.started/ }).uncheck();
    await form.getByRole("checkbox", { name: /version\.uploaded/ }).check();
    await form.getByLabel("Description (optional)").fill("deploy gate v2");
    await form.getByRole("button", { name: "Save changes" }).click();
    webhookUrl = edited;
    await webhookItem().getByText("execution.finished, version.uploaded").waitFor();
    await webhookItem().getByText("deploy gate v2").waitFor();
    await expect(focused(editButton())).resolves.toBe(true);
    // Saved on the server, not only in the page.
    await page.reload();
    await webhookItem().getByText("execution.finished, version.uploaded").waitFor();
    await webhookItem().getByText("signed", { exact: true }).waitFor();
  });

  it("opens a delivery on what it sent: the body, the URL and the headers the receiver got", async () => {
    // The first message's attempts as if made before the server kept requests (migration 0023): none to show.
    const oldMessage = String((await receiver.requests(1))[0]?.headers["webhook-id"]);
    await server.app.services.database.db
      .updateTable("webhook_attempts")
      .set({ request_url: null, request_headers: null })
      .where("delivery_id", "=", oldMessage)
      .execute();
    await webhookItem()
      .getByRole("button", { name: `Deliveries of ${webhookUrl}` })
      .click();
    await webhookItem()
      .getByRole("button", { name: `Send test to ${webhookUrl}` })
      .click();
    const received = (await receiver.requests(3))[2];
    expect(received?.path).toBe("/hook/v2");
    expect(received?.verifyError).toBeUndefined();
    const messageId = String(received?.headers["webhook-id"]);
    const log = webhookItem().getByRole("table", { name: /Deliveries to/ });
    await log
      .getByRole("row")
      .filter({ hasText: messageId })
      .getByText("delivered after 1 attempt")
      .waitFor();

    await log.getByRole("button", { name: `Show request of ${messageId}` }).click();
    const hide = log.getByRole("button", { name: `Hide request of ${messageId}` });
    await expect(hide.getAttribute("aria-expanded")).resolves.toBe("true");
    const details = page.locator(`[id="${await hide.getAttribute("aria-controls")}"]`);
    await details.getByText(`POST ${webhookUrl}`).waitFor();
    const headers = details.getByRole("table", { name: "Headers sent in attempt 1 of 1" });
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature", "content-type"]) {
      const row = headers
        .getByRole("row")
        .filter({ has: page.getByRole("rowheader", { name, exact: true }) });
      await expect(row.getByRole("cell").textContent(), name).resolves.toBe(received?.headers[name]);
    }
    // The body as sent, indented for reading: the same JSON the receiver verified.
    const body = (await details.locator("pre").first().textContent()) ?? "";
    expect(body).toBe(JSON.stringify(JSON.parse(received?.body ?? ""), null, 2));
    await details.getByText("Answer's body (its first KiB)").waitFor();

    await hide.click();
    await expect(details.count()).resolves.toBe(0);

    await log.getByRole("button", { name: `Show request of ${oldMessage}` }).click();
    const old = page.locator(
      `[id="${await log.getByRole("button", { name: `Hide request of ${oldMessage}` }).getAttribute("aria-controls")}"]`,
    );
    await expect(old.getByText("No request recorded for this attempt.").count()).resolves.toBe(2);
    await old.getByText("Attempt 2 of 2", { exact: false }).waitFor();
    await expect(old.getByRole("table").count()).resolves.toBe(0);
    await old.getByText(/"type": "webhook\.test"/).waitFor();
    await log.getByRole("button", { name: `Hide request of ${oldMessage}` }).click();
    await log.getByRole("button", { name: `Show request of ${messageId}` }).click();
  });

  it("breaks no WCAG 2.1 A/AA rule axe-core tests, with a delivery log and a request open, and an edit refused, light and dark", async () => {
    await webhookItem()
      .getByRole("button", { name: `Edit the webhook to ${webhookUrl}` })
      .click();
    const form = section().getByRole("form", { name: `Edit the webhook to ${webhookUrl}` });
    await form.getByLabel("URL").fill("ftp://hooks.example.com/x");
    await form.getByRole("button", { name: "Save changes" }).click();
    await form.getByRole("alert").waitFor();
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      await webhookItem()
        .getByRole("table", { name: /Headers sent in attempt/ })
        .waitFor();
      expect(await violationsInSection(), colorScheme).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.keyboard.press("Escape");
    await expect(form.count()).resolves.toBe(0);
  });

  it("shows a viewer the webhooks and their log, with no controls", async () => {
    const viewerPage = await openSignedIn(browser, server.origin, viewer, "/settings");
    const readOnly = viewerPage.getByRole("region", { name: "Webhooks", exact: true });
    // A URL is often its receiver's secret: a viewer sees scheme, host and port only (API.md §9).
    const masked = new URL(webhookUrl).origin;
    const item = readOnly.getByRole("listitem", { name: masked, exact: true });
    await item.waitFor();
    expect(await viewerPage.content()).not.toContain(webhookUrl);
    for (const name of ["Add webhook", "Edit", "Send test", "Rotate secret", "Delete", "Disable"]) {
      await expect(readOnly.getByRole("button", { name }).count(), name).resolves.toBe(0);
    }
    await item.getByRole("button", { name: `Deliveries of ${masked}` }).click();
    await item.getByRole("table").getByText("delivered after 2 attempts").waitFor();
    await expect(item.getByRole("button", { name: /^Redeliver/ }).count()).resolves.toBe(0);
    // What was sent is no secret: a viewer opens it too.
    const edited = String((await receiver.requests(3))[2]?.headers["webhook-id"]);
    await item
      .getByRole("table", { name: /Deliveries to/ })
      .getByRole("button", { name: `Show request of ${edited}` })
      .click();
    await item.getByRole("table", { name: "Headers sent in attempt 1 of 1" }).waitFor();
    await viewerPage.context().close();
  });

  it("shows a webhook whose every delivery fails as failing: how many in a row, the last error, the next try", async () => {
    const refusing = await TestReceiver.start();
    try {
      // Every message refused, with the receiver's reason in the answer's body.
      for (let n = 0; n < 5; n++) refusing.answers.push({ status: 503, body: "maintenance until 14:00" });
      const ci = await ciHeaders(server);
      const created = await call(`${server.baseUrl}/webhooks`, {
        headers: ci,
        json: { url: refusing.url, events: ["execution.finished"], description: "status page" },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      // The sender records an attempt just after the receiver answers: wait for it in the log.
      const attempted = async (count: number) => {
        const until = Date.now() + 30_000;
        for (;;) {
          const log = await call(`${server.baseUrl}/webhooks/${id}/deliveries`, { headers: ci });
          const items = log.body.items as Array<{ attempts: unknown[] }>;
          if (items.length === count && items.every((item) => item.attempts.length === 1)) return;
          if (Date.now() > until) throw new Error(`no attempt recorded: ${JSON.stringify(items)}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      await page.reload();
      const item = section().getByRole("listitem", { name: refusing.url, exact: true });
      // Nothing sent yet: its own object says enabled, and so does the list.
      await item.getByText("enabled", { exact: true }).waitFor();

      for (const count of [1, 2]) {
        await item.getByRole("button", { name: `Send test to ${refusing.url}` }).click();
        await refusing.requests(count);
        await attempted(count);
      }
      // Retries wait on the server's clock, which the test does not move: both messages stay failing.
      await page.reload();
      await item.getByText("failing", { exact: true }).waitFor();
      const summary = item.getByText(/^The last 2 deliveries failed/);
      await summary.waitFor();
      await expect(summary.textContent()).resolves.toMatch(
        /^The last 2 deliveries failed; last error .+: HTTP 503 "maintenance until 14:00"\. Next try .+\.$/,
      );
      // The working webhook beside it is not tarred with the same brush.
      await webhookItem().getByText("enabled", { exact: true }).waitFor();
      // The failing state's colours read in both themes.
      for (const colorScheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme });
        expect(await violationsInSection(), colorScheme).toEqual([]);
      }
      await page.emulateMedia({ colorScheme: "light" });
      await call(`${server.baseUrl}/webhooks/${id}`, { method: "DELETE", headers: ci });
    } finally {
      await refusing.close();
    }
  });

  it("rotates the secret (shown once, a new one), disables, enables and deletes after a confirmation", async () => {
    await webhookItem()
      .getByRole("button", { name: `Rotate secret of the webhook to ${webhookUrl}` })
      .click();
    const panel = page.getByRole("region", { name: /New signing secret .*: copy it now/ });
    const rotated = (await panel.locator("pre").textContent()) ?? "";
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await panel.getByRole("button", { name: "Done: I stored it" }).click();

    await webhookItem()
      .getByRole("button", { name: `Disable the webhook to ${webhookUrl}` })
      .click();
    await webhookItem().getByText("disabled", { exact: true }).waitFor();
    await webhookItem()
      .getByRole("button", { name: `Enable the webhook to ${webhookUrl}` })
      .click();
    await webhookItem().getByText("enabled", { exact: true }).waitFor();

    await webhookItem()
      .getByRole("button", { name: `Delete the webhook to ${webhookUrl}` })
      .click();
    await webhookItem()
      .getByRole("alertdialog", { name: `Delete the webhook to ${webhookUrl}?` })
      .getByRole("button", { name: "Delete it" })
      .click();
    await section().getByText("No webhooks yet.").waitFor();
  });
});
