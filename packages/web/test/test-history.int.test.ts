// A failed test's history on a run's page: one GET /v1/tests for the page says of each failure whether it is new,
// flaky or a regression, and a live run reads it again once, when it finishes. The plan's runs are reported
// through the agent protocol. Needs the dashboard built first (npm run build:web).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let person: Person;
let ci: Record<string, string>;
let agent: Record<string, string>;
let planId: string;

const device = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
type Case = [name: string, status: "passed" | "failed"];

async function trigger(): Promise<string> {
  // The history orders runs by when they were triggered: one a minute.
  server.clock.advance(60_000);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

async function claim(): Promise<string> {
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [device], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  return claimed.body.job.lease_id;
}

async function report(lease: string, cases: Case[], from = 0) {
  const events = cases.map(([name, status], i) => ({
    seq: from + i,
    type: "test_case",
    step_index: 0,
    classname: "com.example.ShopTest",
    name,
    status,
    duration_ms: 1500,
    message: status === "failed" ? `${name} broke` : null,
  }));
  const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(sent.status).toBe(200);
}

async function complete(lease: string, cases: Case[]) {
  const failed = cases.some(([, status]) => status === "failed");
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: failed ? "failed" : "passed" },
  });
  expect(done.status).toBe(200);
  return done.body as { requeued?: boolean };
}

/** A run of the plan; a failed attempt is re-queued (max_attempts 2) and reports `retry`, or the same again. */
async function run(cases: Case[], retry?: Case[]): Promise<string> {
  const id = await trigger();
  const lease = await claim();
  await report(lease, cases);
  if ((await complete(lease, cases)).requeued) {
    const again = await claim();
    await report(again, retry ?? cases);
    await complete(again, retry ?? cases);
  }
  return id;
}

const historyOf = (page: Page, test: string) =>
  page.getByRole("region", { name: "Failed tests" }).getByRole("listitem").filter({ hasText: test }).first();

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  agent = { "x-api-key": await server.token(await server.createClient(organization, "agent")) };
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "Shop",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      max_attempts: 2,
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
  person = await createMember(server, "lee@example.com");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("a failed test's history on a run's page", () => {
  it("says which failure is new, which is flaky and which is a regression", async () => {
    // checksOut fails on the first attempt and passes on the re-queued one: flaky.
    await run(
      [
        ["addsToCart", "passed"],
        ["checksOut", "failed"],
      ],
      [
        ["addsToCart", "passed"],
        ["checksOut", "passed"],
      ],
    );
    await run([
      ["addsToCart", "passed"],
      ["checksOut", "passed"],
    ]);
    const runId = await run([
      ["addsToCart", "failed"],
      ["checksOut", "failed"],
      ["searches", "failed"],
    ]);

    const page = await openSignedIn(browser, server.origin, person);
    const asked: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/v1/tests") asked.push(request.url());
    });
    await page.goto(`${server.origin}/runs/${runId}`);
    await page.getByRole("heading", { name: "Failed tests (3)" }).waitFor();
    await historyOf(page, "addsToCart").getByText("Passed the last 2 runs before this one").waitFor();
    await historyOf(page, "checksOut").getByText("Flaky: passed after failing in 1 of 3 runs").waitFor();
    await historyOf(page, "searches").getByText("New: first run of this test").waitFor();
    // One request for the page, not one per failure.
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`test_plan_id=${planId}`);
    await page.context().close();
  });

  it("reads a live run's history once while it runs and once when it finishes, not on every event", async () => {
    const runId = await trigger();
    const lease = await claim();
    const cases: Case[] = [["addsToCart", "failed"]];
    await report(lease, cases);

    const page = await openSignedIn(browser, server.origin, person);
    let asked = 0;
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/v1/tests") asked++;
    });
    await page.goto(`${server.origin}/runs/${runId}`);
    // While it runs, its history is the three runs before it.
    await historyOf(page, "addsToCart").getByText("Failed 1 of the last 3 runs").waitFor();
    // More results stream in: the failures are read again, the history is not.
    await report(lease, [["checksOut", "passed"]], 1);
    await page.getByRole("row").filter({ hasText: "checksOut" }).first().waitFor();
    expect(asked).toBe(1);

    // The run fails (both attempts): its own failure joins the history.
    await complete(lease, cases);
    const again = await claim();
    await report(again, cases);
    await complete(again, cases);
    await historyOf(page, "addsToCart").getByText("Failed 2 of the last 4 runs").waitFor();
    expect(asked).toBe(2);
    await page.context().close();
  });
});
