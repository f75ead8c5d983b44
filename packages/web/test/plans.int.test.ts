// The test plans pages end to end, in Debian's chromium against a real server: a member creates a plan through
// the form (steps as inputs; the API's validation messages shown at their fields, then fixed), edits it (every
// field filled in, steps moved, as JSON and back), triggers it on an uploaded version and lands on the new run,
// which asks before it is cancelled; the list pages past its first page; a viewer sees no buttons that change things, and the API refuses their trigger.
// Needs the dashboard built first (npm run build:web).
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalAgent } from "../../server/src/features/agent/index.ts";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, organization, type Person } from "./sample-data.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let member: Person;
let viewer: Person;
let memberContext: BrowserContext;
let page: Page;
let ci: Record<string, string>;
let planUrl: string;
let runUrl: string;

async function openAs(person: Person, path: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const opened = await context.newPage();
  opened.on("pageerror", (error) => console.error(`page error: ${error.message}`));
  await opened.goto(`${server.origin}${path}`);
  await opened.waitForURL(/\/sign-in/);
  await opened.getByLabel("Email").fill(person.email);
  await opened.getByLabel("Password").fill(person.password);
  await opened.getByRole("button", { name: "Sign in" }).click();
  await opened.waitForURL(`${server.origin}${path}`);
  return { context, page: opened };
}

/** The messages shown for a field: the text of what its aria-describedby names. */
async function messagesOf(field: ReturnType<Page["getByLabel"]>): Promise<string> {
  const ids = (await field.getAttribute("aria-describedby"))?.split(" ") ?? [];
  const texts = await Promise.all(
    ids.map(async (id) => {
      const described = page.locator(`[id="${id}"]`);
      return (await described.count()) > 0 ? ((await described.textContent()) ?? "") : "";
    }),
  );
  return texts.join(" ");
}

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  // The plan's instrumentation step runs the version's test package: triggering it needs one. The newer 1.3.0
  // has none: the trigger form starts on 1.2.3 and marks 1.3.0.
  await uploadBasicTestPackage(server, ci);
  server.clock.advance(60_000);
  await registerBasicApp(server, ci, "1.3.0");
  await startLocalAgent(server.app, server.config, server.app.services.clients, server.baseUrl);
  member = await createMember(server, "mira@example.com");
  const account = await server.app.services.people.createUser({
    email: "vic@example.com",
    role: "viewer",
    org: organization,
  });
  viewer = { email: "vic@example.com", password: account.password };
  browser = await launchChromium();
  ({ context: memberContext, page } = await openAs(member, "/plans"));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("test plans in the dashboard", () => {
  it("lists no plans yet, and offers a member to create one", async () => {
    await page.getByRole("heading", { name: "Test plans" }).waitFor();
    await page.getByText("No active test plans.").waitFor();
    await page.getByRole("link", { name: "New test plan" }).click();
    await page.waitForURL(`${server.origin}/plans/new`);
  });

  it("asks for a name before sending a plan without one", async () => {
    const sent: string[] = [];
    const watch = (request: { method(): string; url(): string }) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/v1/testplans")
        sent.push(request.url());
    };
    page.on("request", watch);
    const name = page.getByLabel("Name", { exact: true });
    await name.fill("   ");
    await page.getByRole("button", { name: "Create plan" }).click();
    await expect.poll(() => messagesOf(name)).toBe("Give the plan a name");
    await expect.poll(() => name.getAttribute("aria-invalid")).toBe("true");
    await expect(name.evaluate((input) => input === document.activeElement)).resolves.toBe(true);
    page.off("request", watch);
    expect(sent).toEqual([]);
  });

  it("shows the API's validation messages at their fields, the steps' too, and saves once they are fixed", async () => {
    await page.getByLabel("Name", { exact: true }).fill("Checkout smoke");
    await page.getByRole("button", { name: "Add a device" }).click();
    await page.getByLabel("Device 1 platform").selectOption("ios");
    const timeout = page.getByLabel("Timeout (seconds)", { exact: true });
    await timeout.fill("5");

    // The new plan starts with an inspect step; its fields are inputs.
    const inspect = page.getByRole("group", { name: "Step 1: inspect" });
    const minSdk = inspect.getByLabel("Min SDK at most");
    await expect(minSdk.inputValue()).resolves.toBe("24");
    await minSdk.fill("0");
    await inspect.getByLabel("Target SDK at least").fill("34");

    // A second step, an instrumentation one, through its inputs.
    await page.getByLabel("Type of the new step").selectOption("instrumentation");
    await page.getByRole("button", { name: "Add step" }).click();
    const instrumentation = page.getByRole("group", { name: "Step 2: instrumentation" });
    await instrumentation.getByLabel("Test package").fill("com.example.basic.test");
    // Filter and device options are folded while at their defaults.
    await instrumentation.locator("summary", { hasText: "Which tests run" }).click();
    await instrumentation.locator("summary", { hasText: "Device options" }).click();
    await instrumentation
      .getByLabel("Classes")
      .fill("com.example.basic.LoginTest\ncom.example.basic.CartTest#addsItem");
    await instrumentation.getByLabel("Size").selectOption("medium");
    await instrumentation.getByLabel("Instrumentation arguments").fill("clearPackageData=true");
    await instrumentation.getByLabel("Record video").selectOption("always");
    await instrumentation.getByLabel("Capture logcat").selectOption("no");
    await instrumentation.getByLabel("Step timeout (seconds)").fill("600");
    // A step added by mistake is removed; the focus goes on (here: to adding a step), not to the page's top.
    await page.getByLabel("Type of the new step").selectOption("shell");
    await page.getByRole("button", { name: "Add step" }).click();
    await page.getByRole("group", { name: "Step 3: shell" }).waitFor();
    await page.getByRole("button", { name: "Remove step 3" }).click();
    await page.getByText("Step 3 removed.").waitFor({ state: "attached" });
    await expect(page.getByRole("group", { name: "Step 3: shell" }).count()).resolves.toBe(0);
    await expect(
      page.getByLabel("Type of the new step").evaluate((select) => select === document.activeElement),
    ).resolves.toBe(true);
    await page.getByRole("button", { name: "Create plan" }).click();

    // Below the API's minimums: each message at its own field, the step's at that step's input, which (the
    // first in the form) has the focus.
    await page.locator('[aria-invalid="true"]').first().waitFor();
    await expect.poll(() => timeout.getAttribute("aria-invalid")).toBe("true");
    // In people's words, not Ajv's ("must be >= 30").
    await expect(messagesOf(timeout)).resolves.toContain("must be at least 30");
    await expect.poll(() => minSdk.getAttribute("aria-invalid")).toBe("true");
    await expect(messagesOf(minSdk)).resolves.toContain("must be at least 1");
    await expect(messagesOf(page.getByLabel("Name", { exact: true }))).resolves.toBe("");
    await expect
      .poll(() => inspect.getByLabel("Target SDK at least").getAttribute("aria-invalid"))
      .toBe("false");
    await expect(minSdk.evaluate((input) => input === document.activeElement)).resolves.toBe(true);
    await page.getByText("see the messages at the fields below").waitFor();

    // Fixed; now the device's platform is not the app's: said at that device row's platform.
    await timeout.fill("600");
    await minSdk.fill("21");
    await page.getByRole("button", { name: "Create plan" }).click();
    const platform = page.getByLabel("Device 1 platform");
    await page.getByText("must be android, the app's platform").waitFor();
    await expect.poll(() => platform.getAttribute("aria-invalid")).toBe("true");
    await expect(messagesOf(platform)).resolves.toContain("must be android, the app's platform");
    await expect.poll(() => timeout.getAttribute("aria-invalid")).toBe("false");
    await expect.poll(() => minSdk.getAttribute("aria-invalid")).toBe("false");

    await platform.selectOption("android");
    await page.getByLabel("Device 1 model").fill("Pixel 8");
    await page.getByRole("button", { name: "Create plan" }).click();
    // The plan's own page (not /plans/new, which the URL was a moment ago).
    await page.getByRole("heading", { name: "Checkout smoke" }).waitFor();
    planUrl = page.url();
    expect(planUrl).toMatch(/\/plans\/(?!new$)[^/]+$/);
    await page.getByText("Pixel 8").first().waitFor();
  });

  it("lists the new plan with its steps", async () => {
    await page.getByRole("link", { name: "Test plans" }).click();
    const row = page.locator("tbody tr", { hasText: "Checkout smoke" });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain("inspect → instrumentation");
    await row.getByRole("link").click();
    await page.waitForURL(planUrl);
  });

  it("triggers the plan on an uploaded version and opens the new run, which a member cancels and re-runs", async () => {
    // The plan's instrumentation step needs a test package: the newest version with one is chosen, and the
    // newer one without it cannot be (the server would refuse it).
    const versions = page.getByLabel(/Version of com\.example\.basic/);
    await versions.locator("option", { hasText: "1.3.0" }).waitFor({ state: "attached" });
    await expect(versions.inputValue()).resolves.toBe("1.2.3");
    const newer = versions.locator("option", { hasText: "1.3.0" });
    await expect(newer.textContent()).resolves.toBe("1.3.0 (no test package)");
    await expect(newer.isDisabled()).resolves.toBe(true);
    await expect(versions.locator("option", { hasText: "1.2.3" }).textContent()).resolves.toBe(
      "1.2.3 (with test package)",
    );
    await page.getByText("This plan runs a test APK: 1.3.0 has none, so it starts on 1.2.3.").waitFor();
    await page.getByRole("button", { name: "Trigger", exact: true }).click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    runUrl = page.url();
    await page.getByRole("heading", { name: /com\.example\.basic/ }).waitFor();
    // Who triggered it: the person, by their email.
    await page
      .locator("dt", { hasText: "Triggered by" })
      .locator("+ dd", { hasText: member.email })
      .waitFor();
    // No agent has a Pixel 8: the run waits, and a member can cancel it.
    await page.getByText(/Waiting: /).waitFor();
    // Cancelling cannot be undone: it asks first, and "Keep running" (where the focus is) changes nothing.
    await page.getByRole("button", { name: "Cancel run" }).click();
    const confirm = page.getByRole("dialog", { name: "Cancel this run?" });
    await confirm.getByText("Tests in progress stop; finished results are kept.").waitFor();
    const keep = confirm.getByRole("button", { name: "Keep running" });
    await expect(keep.evaluate((button) => button === document.activeElement)).resolves.toBe(true);
    await keep.click();
    await confirm.waitFor({ state: "hidden" });
    await expect(page.locator("header").getByText("queued", { exact: true }).count()).resolves.toBe(1);
    await page.getByRole("button", { name: "Cancel run" }).click();
    await confirm.getByRole("button", { name: "Cancel run" }).click();
    await page.locator("header").getByText("cancelled", { exact: true }).waitFor();
    await expect(page.getByRole("button", { name: "Cancel run" }).count()).resolves.toBe(0);

    // Re-run: the same plan on the same version, a new run.
    await page.getByRole("button", { name: "Re-run" }).click();
    await page.waitForURL((url) => /\/runs\/[^/]+$/.test(url.pathname) && url.href !== runUrl);
    await page.locator("header").getByText("queued", { exact: true }).waitFor();
    await page.getByText("1.2.3").first().waitFor();
  });

  it("edits the plan: every field comes filled in, steps move, and the change shows on the plan's page", async () => {
    await page.goto(planUrl);
    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByRole("heading", { name: "Edit Checkout smoke" }).waitFor();
    await expect(page.getByLabel("Device 1 model").inputValue()).resolves.toBe("Pixel 8");
    await expect(page.getByLabel("Timeout (seconds)", { exact: true }).inputValue()).resolves.toBe("600");
    const inspect = page.getByRole("group", { name: "Step 1: inspect" });
    await expect(inspect.getByLabel("Min SDK at most").inputValue()).resolves.toBe("21");
    await expect(inspect.getByLabel("Target SDK at least").inputValue()).resolves.toBe("34");
    await expect(inspect.getByLabel("Debuggable").inputValue()).resolves.toBe("no");
    const instrumentation = page.getByRole("group", { name: "Step 2: instrumentation" });
    await expect(instrumentation.getByLabel("Test package").inputValue()).resolves.toBe(
      "com.example.basic.test",
    );
    await expect(instrumentation.getByLabel("Runner").inputValue()).resolves.toBe("");
    await expect(instrumentation.getByLabel("Classes").inputValue()).resolves.toBe(
      "com.example.basic.LoginTest\ncom.example.basic.CartTest#addsItem",
    );
    await expect(instrumentation.getByLabel("Size").inputValue()).resolves.toBe("medium");
    await expect(instrumentation.getByLabel("Instrumentation arguments").inputValue()).resolves.toBe(
      "clearPackageData=true",
    );
    await expect(instrumentation.getByLabel("Record video").inputValue()).resolves.toBe("always");
    await expect(instrumentation.getByLabel("Capture logcat").inputValue()).resolves.toBe("no");
    await expect(instrumentation.getByLabel("Screenshot on failure").inputValue()).resolves.toBe("");
    await expect(instrumentation.getByLabel("Step timeout (seconds)").inputValue()).resolves.toBe("600");

    // Moved up with the keyboard-reachable button; focus stays on the moved step (now first: its Down button).
    await page.getByRole("button", { name: "Move step 2 up" }).click();
    await page.getByRole("group", { name: "Step 1: instrumentation" }).waitFor();
    const focused = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    expect(focused).toBe("Move step 1 down");

    // As JSON and back: the same steps, in the new order.
    await page.getByRole("button", { name: "Edit as JSON" }).click();
    const json = page.getByLabel("Steps as JSON");
    const steps = JSON.parse(await json.inputValue());
    expect(steps).toEqual([
      {
        type: "instrumentation",
        test_package: "com.example.basic.test",
        filter: {
          classes: ["com.example.basic.LoginTest", "com.example.basic.CartTest#addsItem"],
          size: "medium",
        },
        args: { clearPackageData: "true" },
        record_video: "always",
        logcat: false,
        timeout_seconds: 600,
      },
      { type: "inspect", expect: { min_sdk_at_most: 21, target_sdk_at_least: 34, debuggable: false } },
    ]);
    // A field the form does not edit: that step stays JSON, and says so; the API's refusal shows at it.
    steps[0].shard_by = "size";
    await json.fill(JSON.stringify(steps));
    await page.getByRole("button", { name: "Edit in the form" }).click();
    const kept = page.getByRole("group", { name: "Step 1: instrumentation" });
    await kept.getByText("fields the form does not edit (shard_by)").waitFor();
    await expect(
      page.getByRole("group", { name: "Step 2: inspect" }).getByLabel("Min SDK at most").inputValue(),
    ).resolves.toBe("21");
    await page.getByLabel("Timeout (seconds)", { exact: true }).fill("900");
    await page.getByRole("button", { name: "Save changes" }).click();
    await kept.getByText("shard_by: is not a known field").waitFor();
    await expect(
      kept
        .getByText("shard_by: is not a known field")
        .evaluate((message) => message === document.activeElement),
    ).resolves.toBe(true);

    // Without it, back in the form, saved.
    delete steps[0].shard_by;
    await kept.getByLabel("Step as JSON").fill(JSON.stringify(steps[0]));
    await kept.getByRole("button", { name: "Edit this step in the form" }).click();
    await expect(kept.getByLabel("Size").inputValue()).resolves.toBe("medium");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.waitForURL(planUrl);
    await page.getByText("15 m 00 s").waitFor();
    const order = page.getByRole("heading", { name: "Steps (2)" }).locator("+ ol > li");
    await expect(order.allTextContents()).resolves.toEqual(["instrumentation", "inspect"]);
  });

  it("archives the plan (no trigger then) and restores it", async () => {
    await page.goto(planUrl);
    await page.getByRole("button", { name: "Archive" }).click();
    await page.getByText("archived", { exact: true }).waitFor();
    await expect(page.getByRole("button", { name: "Trigger", exact: true }).count()).resolves.toBe(0);
    await page.getByRole("button", { name: "Restore" }).click();
    await page.getByRole("button", { name: "Trigger", exact: true }).waitFor();
  });

  it("deletes the plan softly (restorable for 30 days, listed under deleted) and restores it", async () => {
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByText("This plan is deleted. It can be restored until").waitFor();
    await page.getByRole("link", { name: "Test plans" }).click();
    await page.getByText("No active test plans.").waitFor();
    await page.getByLabel("State").selectOption("deleted");
    await page.locator("tbody tr", { hasText: "Checkout smoke" }).getByRole("link").click();
    await page.getByRole("button", { name: "Restore" }).click();
    await page.getByRole("button", { name: "Trigger", exact: true }).waitFor();
  });

  it("shows a viewer no trigger, edit or re-run buttons, and the API refuses the viewer's trigger (403)", async () => {
    const path = new URL(planUrl).pathname;
    const { context, page: viewerPage } = await openAs(viewer, path);
    await viewerPage.getByRole("heading", { name: "Checkout smoke" }).waitFor();
    await viewerPage.getByRole("heading", { name: /Steps \(2\)/ }).waitFor();
    for (const name of ["Trigger", "Edit", "Archive", "Delete"]) {
      await expect(viewerPage.getByRole("button", { name, exact: true }).count(), name).resolves.toBe(0);
    }
    await expect(viewerPage.getByRole("link", { name: "Edit" }).count()).resolves.toBe(0);
    await viewerPage.getByRole("link", { name: "Test plans" }).click();
    await viewerPage.locator("tbody tr", { hasText: "Checkout smoke" }).waitFor();
    await expect(viewerPage.getByRole("link", { name: "New test plan" }).count()).resolves.toBe(0);
    await viewerPage.goto(runUrl);
    await viewerPage.getByRole("heading", { name: /com\.example\.basic/ }).waitFor();
    await expect(viewerPage.getByRole("button", { name: "Re-run" }).count()).resolves.toBe(0);
    await expect(viewerPage.getByRole("button", { name: "Cancel run" }).count()).resolves.toBe(0);

    // The API is the guard, not the missing button: the viewer's own session, CSRF token and all, gets 403.
    const session = await (await context.request.get(`${server.origin}/auth/session`)).json();
    const planId = path.split("/").pop();
    const refused = await context.request.post(`${server.origin}/v1/testplan/run/batch`, {
      headers: { "x-csrf-token": session.csrf_token, origin: server.origin },
      data: { package_name: "com.example.basic", version: "1.2.3", test_plan_ids: [planId] },
    });
    expect(refused.status()).toBe(403);
    const body = await refused.json();
    expect(body.code).toBe("forbidden");
    expect(body.reason).not.toBe("csrf");
    await context.close();
    await memberContext.close();
  });

  it("pages the list past its first page with the API's cursor: every plan reachable", async () => {
    for (let n = 1; n <= 120; n++) {
      const created = await call(`${server.baseUrl}/testplans`, {
        headers: ci,
        json: {
          package_name: "com.example.basic",
          name: `Bulk plan ${String(n).padStart(3, "0")}`,
          steps: [{ type: "inspect", expect: { debuggable: false } }],
        },
      });
      expect(created.status).toBe(201);
    }
    const { context, page: listPage } = await openAs(member, "/plans");
    const names = () => listPage.locator("tbody tr td:first-child a").allTextContents();
    await listPage.getByText("100 shown").waitFor();
    const first = await names();
    expect(first).toHaveLength(100);
    await listPage.getByRole("button", { name: "Show more" }).click();
    await listPage.locator("tbody tr").nth(120).waitFor();
    // The second page adds the rest, none twice; every plan is there, the one made through the form among them.
    const all = await names();
    expect(all.slice(0, 100)).toEqual(first);
    const expected = [
      "Checkout smoke",
      ...Array.from({ length: 120 }, (_, n) => `Bulk plan ${String(n + 1).padStart(3, "0")}`),
    ];
    expect([...all].sort()).toEqual(expected.sort());
    await expect(listPage.getByRole("button", { name: "Show more" }).count()).resolves.toBe(0);
    await context.close();
  });
});
