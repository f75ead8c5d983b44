// Trend charts on a plan's page (API.md §16 "Trends"), in Debian's chromium against a real server: a plan with a
// failed device run (reported by a stand-in agent, sample-data.ts) shows its pass rate, durations, flaky tests and
// new failure groups as uPlot charts, light and on a phone's width, with the same numbers as a table. Needs the
// dashboard built first (npm run build:web).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, type Person, seedDeviceRun } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let person: Person;
let ci: Record<string, string>;
let planId: string;

const charts = ["Pass rate", "Duration (p50, p95)", "Flaky tests", "New failure groups"];

async function expectCharts(page: Page) {
  const trends = page.getByRole("region", { name: "Trends (30 days)" });
  for (const name of charts) {
    const chart = trends.getByRole("img", { name });
    await chart.locator("canvas").waitFor();
    // As wide as its box: drawn, and not wider than the page.
    const width = await chart.evaluate((element) => element.getBoundingClientRect().width);
    const page_ = await chart.evaluate(() => document.documentElement.clientWidth);
    expect(width).toBeGreaterThan(100);
    expect(width).toBeLessThanOrEqual(page_);
  }
  return trends;
}

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  const runId = await seedDeviceRun(server, ci, { finish: true, branch: "main" });
  planId = (await call(`${server.baseUrl}/executions/${runId}`, { headers: ci })).body.test_plan_id;
  person = await createMember(server, "tess@example.com");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("trend charts on a plan's page", () => {
  it("draws the four charts and lists the same day in the table", async () => {
    const trends = await call(`${server.baseUrl}/testplans/${planId}/trends?days=30`, { headers: ci });
    expect(trends.status).toBe(200);
    const [day] = trends.body.days;
    expect(day).toMatchObject({ executions: 1, pass_rate: 0 });

    const page = await openSignedIn(browser, server.origin, person, `/plans/${planId}`);
    const section = await expectCharts(page);
    await section.getByText("Trends as a table").click();
    const row = section.getByRole("row").filter({ hasText: day.date });
    await row.getByRole("cell", { name: "0%" }).waitFor();
    await row
      .getByRole("cell", { name: String(day.new_failure_groups), exact: true })
      .first()
      .waitFor();
    await page.context().close();
  });

  it("fits a phone's width", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/plans/${planId}`, {
      viewport: { width: 390, height: 844 },
    });
    await expectCharts(page);
    await page.context().close();
  });
});
