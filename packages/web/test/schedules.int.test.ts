// Schedules on a plan's page (API.md §15), in Debian's chromium against a real server: a member adds one (a wrong
// cron expression is said at its field), sees it in words with its time zone, version and next time, disables and
// enables it, and deletes it after a question; a time that was skipped says why and what to do; a viewer reads the
// schedules with no button to change them. Needs the dashboard built first (npm run build:web).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, createPlan, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let member: Person;
let viewer: Person;
let ci: Record<string, string>;

const inspect = { type: "inspect", expect: { debuggable: false } };

interface ScheduleBody {
  id: string;
  cron: string;
  timezone: string;
  version: string;
  enabled: boolean;
  next_run_at: string | null;
  last_result: { outcome: string } | null;
}

async function schedulesOf(planId: string): Promise<ScheduleBody[]> {
  const response = await call(`${server.baseUrl}/testplans/${planId}/schedules`, { headers: ci });
  expect(response.status).toBe(200);
  return response.body.items;
}

const section = (page: Page) => page.getByRole("region", { name: "Schedules" });
const item = (page: Page, cron: string) => section(page).getByRole("listitem", { name: `Schedule ${cron}` });

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: {
      TESTBAY_SCHEDULES_TICK_MS: "20",
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
    },
  });
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  member = await createMember(server, "sam@example.com");
  const account = await server.app.services.people.createUser({
    email: "vera@example.com",
    role: "viewer",
    org: organization,
  });
  viewer = { email: "vera@example.com", password: account.password };
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("schedules on a plan's page", () => {
  it("lets a member add a schedule (errors at the field), disable and enable it, and delete it after asking", async () => {
    const planId = await createPlan(server, ci, { name: "Nightly", steps: [inspect] });
    const page = await openSignedIn(browser, server.origin, member, `/plans/${planId}`);
    await section(page).getByText("This plan runs only when triggered.").waitFor();

    await section(page).getByRole("button", { name: "Add schedule" }).click();
    const form = page.getByRole("form", { name: "Add a schedule" });
    const cron = form.getByLabel("Cron expression");
    await cron.fill("61 * * * *");
    await form.getByLabel("Time zone").selectOption("Europe/Berlin");
    await form.getByLabel("Version", { exact: true }).selectOption("branch");
    await form.getByLabel("Branch").fill("main");
    await form.getByRole("button", { name: "Add schedule" }).click();
    // The server's word on the minute, at the cron field (named by its aria-describedby).
    await form.getByText(/minute: 61/).waitFor();
    await expect(cron.getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(cron.evaluate((input) => input.getAttribute("aria-describedby") ?? "")).resolves.toMatch(
      /error/,
    );
    expect(await schedulesOf(planId)).toEqual([]);

    await cron.fill("0 6 * * 1-5");
    await form.getByText("Monday to Friday at 06:00 (Europe/Berlin)").waitFor();
    await form.getByRole("button", { name: "Add schedule" }).click();
    const added = item(page, "0 6 * * 1-5");
    await added.getByText("Monday to Friday at 06:00").waitFor();
    await added.getByText("Europe/Berlin").waitFor();
    await added.getByText(/The newest version of branch main · Next run:/).waitFor();
    await added.getByText("Not run yet.").waitFor();
    await expect(form.count()).resolves.toBe(0);
    const [created] = await schedulesOf(planId);
    expect(created).toMatchObject({
      cron: "0 6 * * 1-5",
      timezone: "Europe/Berlin",
      version: "latest:branch=main",
      enabled: true,
    });
    // The next time, in the viewer's zone, with its UTC value for a pointer.
    await expect(added.locator("time").getAttribute("datetime")).resolves.toBe(created?.next_run_at);

    await added.getByRole("button", { name: "Disable" }).click();
    await added.getByText("disabled", { exact: true }).waitFor();
    await added.getByText(/Next run: none while disabled/).waitFor();
    expect((await schedulesOf(planId))[0]).toMatchObject({ enabled: false, next_run_at: null });
    await added.getByRole("button", { name: "Enable" }).click();
    await added.getByText("enabled", { exact: true }).waitFor();
    expect((await schedulesOf(planId))[0]?.enabled).toBe(true);

    // Delete asks first; Keep changes nothing.
    await added.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this schedule?" });
    await dialog.getByRole("button", { name: "Keep" }).click();
    expect(await schedulesOf(planId)).toHaveLength(1);
    await added.getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Delete schedule" }).click();
    await section(page).getByText("This plan runs only when triggered.").waitFor();
    expect(await schedulesOf(planId)).toEqual([]);
    await page.context().close();
  });

  it("says why a time was skipped, and shows a viewer the schedules without buttons", async () => {
    const planId = await createPlan(server, ci, { name: "Release branch", steps: [inspect] });
    const created = await call(`${server.baseUrl}/testplans/${planId}/schedules`, {
      headers: ci,
      json: { cron: "* * * * * *", version: "latest:branch=release" },
    });
    expect(created.status).toBe(201);
    // Every second, on a branch no run has had: the next second is skipped.
    server.clock.advance(1000);
    await expect
      .poll(async () => (await schedulesOf(planId))[0]?.last_result?.outcome, { timeout: 10_000 })
      .toBe("skipped");
    const off = await call(`${server.baseUrl}/schedules/${created.body.id}`, {
      method: "PATCH",
      headers: ci,
      json: { enabled: false },
    });
    expect(off.status).toBe(200);

    const page = await openSignedIn(browser, server.origin, viewer, `/plans/${planId}`);
    const skipped = item(page, "* * * * * *");
    await skipped.getByText("Every second").waitFor();
    await skipped
      .getByText(/Skipped .*: No execution of com\.example\.basic has ci\.branch "release"/)
      .waitFor();
    await skipped
      .getByText(/ci\.branch/)
      .first()
      .waitFor();
    await skipped.getByText("disabled", { exact: true }).waitFor();
    for (const name of ["Add schedule", "Disable", "Enable", "Delete"]) {
      await expect(page.getByRole("button", { name }).count(), name).resolves.toBe(0);
    }
    await page.context().close();
  });
});
