// A run with many failures, each with its screenshot and logcat cut: the page fetches a failure's files only as
// it comes into view (not 80 files at once), and a long logcat shows 200 lines, then all, capped at 256 KiB read
// by Range. Needs the dashboard built first (npm run build:web).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { sampleScreenshot } from "./sample-captures.ts";
import { ciHeaders, createMember, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

const failures = 40;
const folder = "device-emulator-5554";
const name = (n: number) => `fails${String(n).padStart(2, "0")}`;
/** 6,000 threadtime lines (about 400 KB): past the 256 KiB the page reads. */
const longLog = Array.from(
  { length: 6_000 },
  (_, i) =>
    `11-24 10:00:00.000  4123  4151 ${i === 4_000 ? "E" : "D"} Checkout: line ${i} of the cart's long story`,
).join("\n");

let server: TestServer;
let browser: Browser;
let person: Person;
let runId: string;

/** An instrumentation run an agent reported: 40 failures, each with a screenshot and a logcat cut uploaded. */
async function seedManyFailures(): Promise<string> {
  const ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  const agent = { "x-api-key": await server.token(await server.createClient(organization, "agent")) };
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "Many failures",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  const device = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [device], step_types: ["maestro"] },
  });
  const lease = claimed.body.job.lease_id as string;
  const put = async (artifact: string, body: Buffer | string, type: string) => {
    const response = await fetch(`${server.baseUrl}/agent/jobs/${lease}/artifacts/${artifact}`, {
      method: "PUT",
      headers: { ...agent, "content-type": type },
      // A plain Uint8Array: the DOM's fetch types (this file also types browser code) take no Buffer.
      body: typeof body === "string" ? body : new Uint8Array(body),
    });
    expect(response.status).toBe(201);
  };
  const events = [];
  for (let n = 0; n < failures; n++) {
    const shot = `${folder}/screenshots/com.example.CartTest.${name(n)}.png`;
    const logcat = `${folder}/logcat/com.example.CartTest.${name(n)}.txt`;
    await put(shot, sampleScreenshot(n), "image/png");
    await put(
      logcat,
      n === 0 ? longLog : `11-24 10:00:00.000  4123  4151 E Cart: ${name(n)} broke\n`,
      "text/plain",
    );
    events.push({
      seq: n,
      type: "test_case",
      step_index: 0,
      classname: "com.example.CartTest",
      name: name(n),
      status: "failed",
      message: `${name(n)} broke`,
      artifacts: [shot, logcat],
    });
  }
  expect(
    (await call(`${server.baseUrl}/agent/jobs/${lease}/events`, { headers: agent, json: { events } })).status,
  ).toBe(200);
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: "failed" },
  });
  expect(done.status).toBe(200);
  return run.body.execution.id;
}

const signedInPage = () => openSignedIn(browser, server.origin, person);

const loaded = (page: Page, test: string) =>
  expect
    .poll(
      () =>
        page
          .getByAltText(`Screenshot of ${test} when it failed`)
          .first()
          .evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth),
      { timeout: 15_000 },
    )
    .toBeGreaterThan(0);

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  // The organization comes with its first client (seeding makes it); the person joins it after.
  runId = await seedManyFailures();
  person = await createMember(server, "kim@example.com");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("a failure's screenshot and logcat on a run with many failures", () => {
  it("are fetched as each failure comes into view, not all at once", async () => {
    const page = await signedInPage();
    const fetched = new Set<string>();
    page.on("request", (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith(`/v1/executions/${runId}/artifacts/`)) fetched.add(path);
    });
    await page.goto(`${server.origin}/runs/${runId}`);
    await page.getByRole("heading", { name: `Failed tests (${failures})` }).waitFor();
    await loaded(page, name(0));
    // The first few failures are near the window; the other thirty-odd have asked for nothing.
    expect(fetched.size).toBeGreaterThan(0);
    expect(fetched.size).toBeLessThan(failures);

    const last = page
      .getByRole("region", { name: "Failed tests" })
      .getByRole("listitem")
      .filter({ hasText: name(39) });
    await last.first().scrollIntoViewIfNeeded();
    await loaded(page, name(39));
    expect(fetched).toContain(
      `/v1/executions/${runId}/artifacts/${folder}/screenshots/com.example.CartTest.${name(39)}.png`,
    );
    await page.context().close();
  });

  it("shows a long logcat's first 200 lines, then all it read, and says the rest is in the download", async () => {
    const page = await signedInPage();
    await page.goto(`${server.origin}/runs/${runId}`);
    const logcat = page.getByRole("region", { name: `Logcat of ${name(0)}` });
    await logcat.getByText("line 199 of the cart's long story", { exact: false }).waitFor();
    expect(await logcat.getByText("line 200 of the cart's long story").count()).toBe(0);
    await page.getByText(/^The first 256 KB of \d+ KB: download it for the rest\.$/).waitFor();

    await page.getByRole("button", { name: /^Show all \d+ lines$/ }).click();
    await logcat.getByText("line 3000 of the cart's long story").waitFor();
    // The error line past the 256 KiB read is not there: the download has it.
    expect(await logcat.getByText("line 4000 of the cart's long story").count()).toBe(0);
    await page.context().close();
  });

  it("lists the run's artifacts by device run and attempt, previews a picture and a text on demand, downloads each", async () => {
    const page = await signedInPage();
    await page.goto(`${server.origin}/runs/${runId}`);
    const section = page.getByRole("region", { name: `Artifacts (${failures * 2})` });
    // 80 files: the device run's group starts closed.
    const group = section.getByText("Pixel 7 · 14 · emulator-5554 · attempt 1");
    await group.click();
    const shot = `${folder}/screenshots/com.example.CartTest.${name(7)}.png`;
    const cut = `${folder}/logcat/com.example.CartTest.${name(7)}.txt`;
    await section.getByRole("button", { name: `Preview ${shot}` }).waitFor();
    // Nothing is previewed until asked.
    expect(await section.getByRole("img").count()).toBe(0);

    await section.getByRole("button", { name: `Preview ${shot}` }).click();
    const preview = section.getByAltText(`com.example.CartTest.${name(7)}.png`);
    await expect
      .poll(() => preview.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth), {
        timeout: 15_000,
      })
      .toBeGreaterThan(0);
    await section.getByRole("button", { name: `Preview ${cut}` }).click();
    await section
      .getByRole("region", { name: `com.example.CartTest.${name(7)}.txt` })
      .getByText(`${name(7)} broke`)
      .waitFor();

    // A download is a plain link the session cookie authenticates: an attachment, never rendered.
    const href = await section.getByRole("link", { name: `Download ${cut}` }).getAttribute("href");
    const download = await page.request.get(`${server.origin}${href}`);
    expect(download.status()).toBe(200);
    expect(download.headers()["content-disposition"]).toBe(
      `attachment; filename="com.example.CartTest.${name(7)}.txt"`,
    );
    expect(await download.text()).toContain(`${name(7)} broke`);
    await page.context().close();
  });
});
