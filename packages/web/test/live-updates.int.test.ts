// A run's page changes while the run does, with no reload and no polling: the dashboard listens to GET /v1/events.
// In the scaled project the browser talks to one API instance and the agent reports to the other, so the page
// can only change if the hint crosses instances. Needs the dashboard built first (npm run build:web).
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
/** The instance the browser uses, and the one the CI client and the agent call (the other one when scaled). */
let watched: TestServer;
let acting: TestServer;
let browser: Browser;
let person: Person;
let ci: Record<string, string>;
let agent: Record<string, string>;

let plans = 0;

async function triggerInspectPlan(): Promise<string> {
  const plan = await call(`${acting.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `Live ${++plans}`,
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  expect(plan.status).toBe(201);
  const run = await call(`${acting.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

const signedInPage = (path: string) => openSignedIn(browser, watched.origin, person, path);

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  watched = server.instances[0] ?? server;
  acting = server.instances.at(-1) ?? server;
  ci = await ciHeaders(server);
  agent = { "x-api-key": await server.token(await server.createClient("default", "agent")) };
  await registerBasicApp(server, ci);
  person = await createMember(server, "lena@example.com");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("a run's page, live", () => {
  it("goes from queued to running to failed as the agent reports, without reload or polling", async () => {
    const id = await triggerInspectPlan();
    const page = await signedInPage(`/runs/${id}`);
    const status = page.locator("main header");
    await status.getByText("queued", { exact: true }).waitFor();
    await page.getByRole("status").getByText("Live").waitFor();
    // A mark in the page's memory: a reload would lose it.
    await page.evaluate(() => {
      (window as unknown as { stillTheSamePage: boolean }).stillTheSamePage = true;
    });
    const executionReads: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === `/v1/executions/${id}`) executionReads.push(request.url());
    });

    const claimed = await call(`${acting.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "lab-1", devices: [], step_types: ["inspect"] },
    });
    expect(claimed.body.job.execution_id).toBe(id);
    const lease = claimed.body.job.lease_id;
    await status.getByText("running", { exact: true }).waitFor();

    // Nothing changes for 5 s: a page that polled every 2 s would have read the run twice by now.
    const readsWhileQuiet = executionReads.length;
    await page.waitForTimeout(5_000);
    expect(executionReads.length).toBe(readsWhileQuiet);

    const reported = await call(`${acting.baseUrl}/agent/jobs/${lease}/events`, {
      headers: agent,
      json: {
        events: [
          {
            seq: 1,
            type: "test_case",
            step_index: 0,
            classname: "com.example.CheckoutTest",
            name: "totalIncludesTax",
            status: "failed",
            message: "expected 10.80 but was 10.00",
            details: "java.lang.AssertionError: expected 10.80 but was 10.00",
            duration_ms: 900,
          },
        ],
      },
    });
    expect(reported.status).toBe(200);
    await page.getByText("expected 10.80 but was 10.00").first().waitFor();

    const done = await call(`${acting.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: agent,
      json: { status: "failed", summary: { tests: 1, passed: 0, failed: 1, skipped: 0 } },
    });
    expect(done.status).toBe(200);
    await status.getByText("failed", { exact: true }).waitFor();
    expect(
      await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage),
    ).toBe(true);
    await page.context().close();
  });

  it("shows a run triggered elsewhere at the top of the runs list", async () => {
    const page = await signedInPage("/runs");
    await page.getByRole("status").getByText("Live").waitFor();
    const id = await triggerInspectPlan();
    await page.locator(`a[href="/runs/${id}"]`).first().waitFor();
    await page.context().close();
  });
});
