// Quarantine on a run's page, in Debian's chromium against a real server: a member quarantines a failing test with a
// reason (a dialog asks for it) and sees the Quarantined badge on the failure and in the tests table, then releases
// it; a viewer sees the badge but no button. The run is reported through the agent protocol. Needs the dashboard
// built first (npm run build:web).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let member: Person;
let viewer: Person;
let ci: Record<string, string>;
let planId: string;
let runId: string;
let testId: string;

const device = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

/** A run of `planId` in which paysWithCard fails and addsToCart passes. */
async function failingRun(planId: string): Promise<string> {
  const agent = { "x-api-key": await server.token(await server.createClient(organization, "agent")) };
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [device], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  const lease = claimed.body.job.lease_id;
  const events = [
    ["paysWithCard", "failed"],
    ["addsToCart", "passed"],
  ].map(([name, status], seq) => ({
    seq,
    type: "test_case",
    step_index: 0,
    classname: "com.example.CheckoutTest",
    name,
    status,
    duration_ms: 1200,
    message: status === "failed" ? "Payment sandbox timed out" : null,
  }));
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

const failure = (page: Page) =>
  page
    .getByRole("region", { name: "Failed tests" })
    .getByRole("listitem")
    .filter({ hasText: "paysWithCard" });

const tableRow = (page: Page) =>
  page
    .getByRole("region", { name: /All tests/ })
    .getByRole("row")
    .filter({ hasText: "paysWithCard" });

async function quarantineOf(): Promise<{ quarantined: boolean; quarantine: Record<string, unknown> | null }> {
  const run = await call(`${server.baseUrl}/executions/${runId}`, { headers: ci });
  const tests = await call(`${server.baseUrl}/tests?test_plan_id=${run.body.test_plan_id}`, { headers: ci });
  return tests.body.items.find((t: { id: string }) => t.id === testId);
}

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "Checkout",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
  runId = await failingRun(planId);
  const tests = await call(`${server.baseUrl}/executions/${runId}/tests?status=failed`, { headers: ci });
  testId = tests.body.items[0].id;
  member = await createMember(server, "quinn@example.com");
  const account = await server.app.services.people.createUser({
    email: "vic@example.com",
    role: "viewer",
    org: organization,
  });
  viewer = { email: "vic@example.com", password: account.password };
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("quarantine on a run's page", () => {
  it("lets a member quarantine a failing test with a reason, shows the badge, and release it", async () => {
    const page = await openSignedIn(browser, server.origin, member, `/runs/${runId}`);
    await failure(page).getByText("Payment sandbox timed out").waitFor();
    await expect(failure(page).getByText("Quarantined", { exact: true }).count()).resolves.toBe(0);

    await failure(page).getByRole("button", { name: "Quarantine…" }).click();
    const dialog = page.getByRole("dialog", { name: "Quarantine paysWithCard?" });
    await dialog.waitFor();
    // No reason, no quarantine: the button waits for one.
    await expect(dialog.getByRole("button", { name: "Quarantine", exact: true }).isDisabled()).resolves.toBe(
      true,
    );
    await dialog.getByLabel("Reason").fill("Sandbox flaky since Monday: PAY-42");
    await dialog.getByRole("button", { name: "Quarantine", exact: true }).click();

    await failure(page).getByText("Quarantined", { exact: true }).waitFor();
    await failure(page)
      .getByText(/Quarantined by quinn@example\.com on \d{4}-\d{2}-\d{2}:/)
      .waitFor();
    await failure(page).getByText("Sandbox flaky since Monday: PAY-42").waitFor();
    await tableRow(page).getByText("Quarantined", { exact: true }).waitFor();
    await expect(dialog.isVisible()).resolves.toBe(false);
    expect(await quarantineOf()).toMatchObject({
      quarantined: true,
      quarantine: { reason: "Sandbox flaky since Monday: PAY-42", quarantined_by: "quinn@example.com" },
    });

    await failure(page).getByRole("button", { name: "Release from quarantine" }).click();
    await failure(page).getByRole("button", { name: "Quarantine…" }).waitFor();
    await expect(failure(page).getByText("Quarantined", { exact: true }).count()).resolves.toBe(0);
    await expect(tableRow(page).getByText("Quarantined", { exact: true }).count()).resolves.toBe(0);
    expect(await quarantineOf()).toMatchObject({ quarantined: false, quarantine: null });
    await page.context().close();
  });

  it("shows a viewer the badge and the reason but no Quarantine or Release button", async () => {
    const put = await call(`${server.baseUrl}/tests/${testId}/quarantine`, {
      method: "PUT",
      headers: ci,
      json: { reason: "Known flaky: PAY-42" },
    });
    expect(put.status).toBe(200);
    const page = await openSignedIn(browser, server.origin, viewer, `/runs/${runId}`);
    await failure(page).getByText("Known flaky: PAY-42").waitFor();
    await failure(page).getByText("Quarantined", { exact: true }).waitFor();
    for (const name of ["Quarantine…", "Release from quarantine"]) {
      await expect(page.getByRole("button", { name }).count(), name).resolves.toBe(0);
    }
    await page.context().close();
  });

  it("shows a run that failed only in a quarantined test as passed, its summary counting the quarantined failure", async () => {
    // paysWithCard is quarantined (the test before): it fails again, and the run passes.
    const passedRun = await failingRun(planId);
    const page = await openSignedIn(browser, server.origin, member, `/runs/${passedRun}`);
    await failure(page).getByText("Quarantined", { exact: true }).waitFor();
    await page.getByText("1 failed · 1 quarantined").first().waitFor();
    const run = await call(`${server.baseUrl}/executions/${passedRun}`, { headers: ci });
    expect(run.body).toMatchObject({ status: "passed", summary: { failed: 1, quarantined_failures: 1 } });
    await page.context().close();
  });
});
