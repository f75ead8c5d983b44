// The Failures page, in Debian's chromium against a real server: a device run's failures (reported by a stand-in
// agent with stack traces and screenshots, sample-data.ts) show as groups with their status, counts and first
// and last seen runs; a group opens on its occurrences and its example's message, stack and screenshot; the plan
// filter narrows the list. Needs the dashboard built first (npm run build:web).
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, createPlan, type Person, seedDeviceRun } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let person: Person;
let ci: Record<string, string>;
let runId: string;

interface Group {
  signature: string;
  title: string;
  status: string;
  occurrences: number;
}

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  runId = await seedDeviceRun(server, ci, { finish: true, branch: "main" });
  person = await createMember(server, "fay@example.com");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the Failures page", () => {
  it("shows the groups, opens one on its occurrences and example, and filters by plan", async () => {
    const listed = await call(`${server.baseUrl}/failures`, { headers: ci });
    expect(listed.status).toBe(200);
    const groups = listed.body.items as Group[];
    expect(groups.length).toBeGreaterThan(0);
    const group = groups[0] as Group;

    // A plan with no failures, for the plan filter.
    const quiet = await createPlan(server, ci, {
      name: "Quiet",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    });
    const page = await openSignedIn(browser, server.origin, person, "/failures");
    await page.getByRole("link", { name: "Failures", exact: true }).waitFor();
    // The page keeps the API's order (last seen first); two groups may share a title (different app frames).
    const item = page.getByRole("listitem", { name: group.title }).first();
    await item.getByText(group.status, { exact: true }).waitFor();
    await item.getByText("Occurrences").waitFor();
    // First and last seen link to the run they were seen in.
    const seen = item.locator(`a[href="/runs/${runId}"]`);
    await expect(seen.count()).resolves.toBe(2);

    await item.getByRole("link", { name: group.title }).click();
    await page.waitForURL(/group=/);
    await item.getByRole("heading", { name: "Example" }).waitFor();
    await item.getByText("expected:<Total: 42,00 €> but was:<Total: 0,00 €>").first().waitFor();
    await item.getByRole("table", { name: `Occurrences of ${group.title}` }).waitFor();
    await item.getByRole("link", { name: "Open run" }).first().waitFor();
    // The example's screenshot, as the run page shows it.
    await item.locator("img").first().waitFor();

    // A plan with no failures: the filter empties the list.
    await page.getByLabel("Test plan").selectOption(quiet);
    await page.getByText("No failures for these filters.").waitFor();
    await page.context().close();
  });
});
