// The dashboard's page of an Appium session (API.md §12; issue 27), on a real session: a real server, a real
// `testbay-agent --appium` process with the repository's Appium and its fake driver on the stand-in adb lab's
// device, and a real webdriverio client that sends a few commands (one of them fails), marks the session failed
// with setSessionStatus and deletes it (sample-session.ts). Then the runs list and the session's page, in Debian's
// chromium, as a member sees them. Needs the dashboard built first (npm run build:web).
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IssuedCredentials } from "../../server/src/features/clients/index.ts";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { createMember, organization, type Person } from "./sample-data.ts";
import {
  openSampleSession,
  runLongSession,
  runSampleSession,
  type SampleSession,
  type SessionLab,
  sessionAgentName,
  sessionDeviceError,
  sessionFailureReason,
  sessionName,
  sessionSerial,
  startSessionLab,
} from "./sample-session.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let person: Person;
let credentials: IssuedCredentials;
let ci: Record<string, string>;
let lab: SessionLab;
let session: SampleSession;

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      // Heartbeats every 2 s, which is how the agent hears of a cancel.
      TESTBAY_LEASE_TTL_SECONDS: "6",
    },
  });
  credentials = await server.createClient(organization, "ci");
  ci = { "x-api-key": await server.token(credentials) };
  person = await createMember(server, "sam@example.com");
  lab = await startSessionLab(server);
  session = await runSampleSession(server, lab, credentials);
  // The agent uploads the session's files and completes its run just after the DELETE.
  const until = Date.now() + 60_000;
  for (;;) {
    const { body } = await call(`${server.baseUrl}/executions/${session.id}`, { headers: ci });
    if (!["queued", "running"].includes(body.status)) break;
    if (Date.now() > until) throw new Error(`the session did not end:\n${lab.agent.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await lab?.close();
  await server?.close();
});

/** axe-core's WCAG 2.1 A/AA findings on the page, one line each (as accessibility.int.test.ts runs it). */
async function accessibilityFindings(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve("axe-core/axe.min.js") });
  return page.evaluate(async () => {
    type Finding = { id: string; help: string; nodes: { target: string[] }[] };
    const { axe } = globalThis as unknown as {
      axe: { run(context: unknown, options: unknown): Promise<{ violations: Finding[] }> };
    };
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    });
    return result.violations.map(
      (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`,
    );
  });
}

const commandRows = (page: Page) => page.getByRole("list", { name: "Commands" }).getByRole("listitem");

describe("an Appium session on the dashboard", () => {
  it("is listed among the runs by its name, marked as a session, with no plan to link to", async () => {
    const page = await openSignedIn(browser, server.origin, person, "/runs");
    const row = page.locator("tbody tr").filter({ hasText: session.id });
    await row.getByRole("link", { name: sessionName }).waitFor();
    // (Also under the name, for a phone, where the column is hidden.)
    await row.getByText("Appium session", { exact: true }).filter({ visible: true }).waitFor();
    await row.getByText("failed", { exact: true }).waitFor();
    // Nothing in the row points at a test plan (a session has none).
    expect(await row.locator('a[href^="/plans/"]').count()).toBe(0);

    await row.getByRole("link", { name: sessionName }).click();
    await page.waitForURL(`${server.origin}/runs/${session.id}`);
    await page.getByRole("heading", { level: 1, name: sessionName }).waitFor();
    await page.context().close();
  });

  it("shows its status and why, its device, and its commands in order with the failed one marked", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${session.id}`);
    const header = page.locator("main header");
    await header.getByRole("heading", { level: 1, name: sessionName }).waitFor();
    await header.getByText("failed", { exact: true }).waitFor();
    // The client set the status (setSessionStatus, with its reason) and ended the session with DELETE.
    const why = header.getByLabel("Why");
    await why.getByText(/Marked failed by the client/).waitFor();
    expect(await why.textContent()).toContain(sessionFailureReason);
    expect(await why.textContent()).toContain("the client ended it (DELETE)");
    await header.getByText(`Pixel 7 · 14 · ${sessionSerial}`).waitFor();
    await header.getByText(sessionAgentName, { exact: true }).waitFor();

    await page.getByText(`${session.commands.length} commands · 1 failed`).waitFor();
    const rows = commandRows(page);
    await expect.poll(() => rows.count()).toBe(session.commands.length);
    const labels = await rows.evaluateAll((items) => items.map((item) => item.getAttribute("aria-label")));
    expect(labels).toEqual(
      session.commands.map(
        (command, index) =>
          `${index + 1}. ${command.method} ${command.path || "/"}: ${command.failed ? "404 failed" : 200}`,
      ),
    );
    // The failed find is marked in words, not colour alone.
    const failed = rows.filter({ hasText: "404 failed" });
    expect(await failed.count()).toBe(1);
    await failed.getByText("Find element").waitFor();

    // "Failures only" narrows the list to it.
    await page.getByLabel("Failures only").check();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getAttribute("aria-label")).toBe("6. POST /element: 404 failed");
    await page.context().close();
  });

  it("has the video, which a command's time moves to that moment, the device log and Appium's log", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${session.id}`);
    const video = page.getByRole("region", { name: "Video" }).locator("video");
    await video.waitFor();
    await expect
      .poll(() => video.evaluate((element: HTMLVideoElement) => element.readyState), { timeout: 15_000 })
      .toBeGreaterThanOrEqual(1);
    expect(await video.evaluate((element: HTMLVideoElement) => element.currentTime)).toBe(0);

    // The failed command's time, clicked: the video is moved past its start, towards that moment.
    const failed = commandRows(page).filter({ hasText: "404 failed" });
    await failed.getByRole("button", { name: /show in the video/ }).click();
    await expect
      .poll(() => video.evaluate((element: HTMLVideoElement) => element.currentTime))
      .toBeGreaterThan(0);
    await page.getByText(/showing \d+:\d\d after the session's start/).waitFor();

    // The device log beside it, with the app's error logged during the session marked.
    const deviceLog = page.getByRole("region", { name: "Device log", exact: true });
    const error = deviceLog.getByText(sessionDeviceError);
    await error.waitFor();
    expect(await error.evaluate((line) => line.className)).toContain("bg-red");
    // Appium's log and the command log are among the artifacts, each to download.
    const artifacts = page.getByRole("region", { name: /^Artifacts/ });
    await artifacts.getByRole("link", { name: "Download appium.log" }).waitFor();
    await artifacts.getByRole("link", { name: "Download commands.jsonl" }).waitFor();
    await artifacts
      .getByRole("link", { name: `Download device-${sessionSerial}/video/part-01.mp4` })
      .waitFor();
    await page.context().close();
  });

  it("is cancelled from its page while it runs, and says the commands come when it ends", async () => {
    // A second session, left open: its page is live, with no command log yet.
    const open = await openSampleSession(server, lab, credentials);
    const page = await openSignedIn(browser, server.origin, person, `/runs/${open.id}`);
    const header = page.locator("main header");
    await header.getByText("running", { exact: true }).waitFor();
    await page.getByText(/The commands appear when the session ends/).waitFor();

    await header.getByRole("button", { name: "Cancel session" }).click();
    await page
      .getByRole("dialog", { name: "Cancel this session?" })
      .getByRole("button", { name: "Cancel session" })
      .click();
    await header.getByText("cancelled", { exact: true }).waitFor({ timeout: 60_000 });
    await header.getByLabel("Why").getByText("it was cancelled", { exact: false }).waitFor();
    // The command log the agent uploaded as the session ended comes in without a reload.
    await page.getByText("1 command", { exact: true }).waitFor();
    expect(await commandRows(page).first().getAttribute("aria-label")).toBe("1. GET /source: 200");
    await open.end();
    await page.context().close();
  });

  it("keeps a long session's timeline quick: all its commands counted, only those in view drawn", async () => {
    const id = await runLongSession(server, lab, credentials, 400);
    const page = await openSignedIn(browser, server.origin, person, `/runs/${id}`);
    // 400 page sources and the DELETE.
    await page.getByText("401 commands", { exact: true }).waitFor({ timeout: 60_000 });
    const drawn = await commandRows(page).count();
    expect(drawn).toBeGreaterThan(5);
    expect(drawn).toBeLessThan(100);
    // Scrolled to its end, the list draws the last command.
    await page
      .getByRole("list", { name: "Commands" })
      .evaluate((list) => list.parentElement?.scrollTo({ top: list.parentElement.scrollHeight }));
    await commandRows(page).filter({ hasText: "Delete session" }).waitFor();
    expect(await commandRows(page).last().getAttribute("aria-label")).toBe("401. DELETE /: 200");
    await page.context().close();
  });

  for (const theme of ["light", "dark"] as const) {
    it(`passes axe-core's WCAG 2.1 A/AA checks, ${theme} theme`, async () => {
      // bypassCSP: axe is injected as an inline script, which the dashboard's own policy rightly refuses.
      const page = await openSignedIn(browser, server.origin, person, `/runs/${session.id}`, {
        colorScheme: theme,
        bypassCSP: true,
      });
      await page
        .getByRole("region", { name: "Device log", exact: true })
        .getByText(sessionDeviceError)
        .waitFor();
      await expect.poll(() => commandRows(page).count()).toBe(session.commands.length);
      const findings = await accessibilityFindings(page);
      expect(findings, findings.join("\n")).toEqual([]);
      await page.context().close();
    });
  }
});
