// Shards and retries in the dashboard (issue 15), in Debian's chromium against a real server: a run of one device
// entry split into three shards shows each shard's device run under its entry and each test's shard in the tests
// table; the test that passed on its rerun is listed after the failures ("Passed on retry") with its tries, each
// with its own screenshot and logcat; a plan's shards and retries are set in its form, refused at the field when
// out of range, and come back as saved. Needs the dashboard built first (npm run build:web).
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, type Person } from "./sample-data.ts";
import { failingTest, flakyTest, seedShardedRun, testsPerShard } from "./sharded-sample.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let browser: Browser;
let person: Person;
let ci: Record<string, string>;
let runId: string;

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = await ciHeaders(server);
  runId = await seedShardedRun(server, ci);
  person = await createMember(server);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Every image in `within` loaded and drawn (a broken one has no natural width). */
const imagesLoaded = (within: Locator) =>
  within
    .locator("img")
    .evaluateAll((images) =>
      images.map(
        (image) => (image as HTMLImageElement).complete && (image as HTMLImageElement).naturalWidth > 0,
      ),
    );

describe("a sharded run with retries", () => {
  it("is what the page shows: the API's view of it", async () => {
    const run = await call(`${server.baseUrl}/executions/${runId}`, { headers: ci });
    expect(run.body.status).toBe("failed");
    expect(run.body.devices.map((d: { shard: number }) => d.shard)).toEqual([0, 1, 2]);
    // Each test counted once, whatever its tries.
    expect(run.body.summary).toMatchObject({ tests: 3 * testsPerShard, failed: 1, flaky: 1 });
  });

  it("groups the device runs under their device entry, each with its shard", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${runId}`);
    const entry = page.getByRole("region", { name: /android · Pixel 8 · 3 shards/ });
    await entry.waitFor();
    const cards = entry.getByRole("listitem");
    await expect(cards.count()).resolves.toBe(3);
    for (const [index, label] of ["Shard 1 of 3", "Shard 2 of 3", "Shard 3 of 3"].entries()) {
      await cards.nth(index).getByText(label, { exact: true }).waitFor();
    }
    await cards.nth(2).getByText("failed", { exact: true }).waitFor();

    // The tests table says on which shard each test ran.
    const table = page.getByRole("region", { name: /All tests/ });
    await table.getByRole("heading", { name: `All tests (${3 * testsPerShard})` }).waitFor();
    await table.getByLabel("Search tests").fill(flakyTest.name);
    const row = table.getByRole("row").filter({ hasText: flakyTest.name });
    await row.getByText("Pixel 8 · 14 · shard 2 of 3").waitFor();
    await row.getByText("flaky", { exact: true }).waitFor();
    await table.getByLabel("Search tests").fill(failingTest.name);
    await table.getByRole("row").filter({ hasText: failingTest.name }).getByText("shard 3 of 3").waitFor();
    await page.context().close();
  });

  it("lists the flaky test after the failures, with each try's status, message, screenshot and logcat", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${runId}`);
    const failures = page.getByRole("region", { name: /^Failed tests/ });
    await failures.getByRole("heading", { name: "Failed tests (1)" }).waitFor();
    const failing = failures.getByRole("listitem").filter({ hasText: failingTest.name }).first();
    await failing.getByText("Tries (3): failed, then failed, then failed").waitFor();

    const retried = failures.getByRole("list", { name: /Passed on retry/ });
    await failures.getByRole("heading", { name: "Passed on retry (1)" }).waitFor();
    const flaky = retried.getByRole("listitem").filter({ hasText: flakyTest.name }).first();
    await flaky.getByText("flaky", { exact: true }).waitFor();
    await flaky.getByText(/shard 2 of 3/).waitFor();
    // The failures come first, the flaky test after them.
    const order = await failures.evaluate(
      (section, names) => names.map((name) => section.textContent?.indexOf(name) ?? -1),
      [failingTest.name, flakyTest.name],
    );
    expect(order[0]).toBeGreaterThan(-1);
    expect(order[1]).toBeGreaterThan(order[0] as number);

    await flaky.getByText("Tries (2): failed, then passed").click();
    const first = flaky.getByRole("listitem", { name: "Try 1: failed" });
    await first.getByText("Voucher banner not shown within 5 s").waitFor();
    await first.getByRole("img", { name: `Screenshot of ${flakyTest.name}, try 1` }).waitFor();
    await page.waitForFunction((name) => {
      const image = document.querySelector<HTMLImageElement>(`img[alt="Screenshot of ${name}, try 1"]`);
      return Boolean(image?.complete && image.naturalWidth > 0);
    }, flakyTest.name);
    // The thumbnail and its enlarged copy (in the closed dialog) are both that try's screenshot.
    expect(await imagesLoaded(first)).not.toContain(false);
    // Its logcat cut inline, read from that try's own file.
    await first.getByRole("region", { name: `Logcat of ${flakyTest.name}, try 1` }).waitFor();
    await expect(
      first.getByRole("link", { name: "Download screenshot" }).getAttribute("href"),
    ).resolves.toMatch(
      /screenshots\/com\.example\.basic\.VoucherTest\.appliesVoucherOnce\.try1\.png\?device=0&shard=1&attempt=1$/,
    );
    const second = flaky.getByRole("listitem", { name: "Try 2 · rerun alone: passed" });
    await second.waitFor();
    await expect(second.locator("img").count()).resolves.toBe(0);

    // The always-failing test's three tries each have their own screenshot.
    await failing.getByText("Tries (3): failed, then failed, then failed").click();
    for (const n of [1, 2, 3]) {
      const name = n === 1 ? "Try 1: failed" : `Try ${n} · rerun alone: failed`;
      const tried = failing.getByRole("listitem", { name });
      await tried.getByRole("img", { name: `Screenshot of ${failingTest.name}, try ${n}` }).waitFor();
    }
    await page.context().close();
  });
});

describe("a plan's shards and retries in its form", () => {
  let page: Page;

  it("refuses shards out of range at the field, saves them once fixed, and shows them as saved", async () => {
    page = await openSignedIn(browser, server.origin, person, "/plans/new");
    await page.getByLabel("Name", { exact: true }).fill("Sharded checkout");
    await page.getByRole("button", { name: "Add a device" }).click();
    await page.getByLabel("Device 1 model").fill("Pixel 8");
    await page.getByRole("button", { name: "Remove step 1" }).click();
    await page.getByLabel("Type of the new step").selectOption("instrumentation");
    await page.getByRole("button", { name: "Add step" }).click();
    const step = page.getByRole("group", { name: "Step 1: instrumentation" });
    await step.locator("summary", { hasText: "Shards and retries" }).click();
    const shards = step.getByLabel("Shards", { exact: true });
    await shards.fill("60");
    await step.getByLabel("Split by").selectOption("uniform");
    const retries = step.getByLabel("Retry failed tests");
    await retries.fill("2");
    await page.getByRole("button", { name: "Create plan" }).click();

    // The API's message, at the Shards input, which is outlined and named by it.
    await page.locator('[aria-invalid="true"]').first().waitFor();
    await expect.poll(() => shards.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await shards.getAttribute("aria-describedby"))?.split(" ") ?? [];
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(messages.join(" ")).toMatch(/50/);
    await expect.poll(() => retries.getAttribute("aria-invalid")).toBe("false");

    await shards.fill("3");
    await page.getByRole("button", { name: "Create plan" }).click();
    await page.getByRole("heading", { name: "Sharded checkout" }).waitFor();
    await page.getByText("instrumentation: 3 shards by count, failed tests retried up to 2 times").waitFor();
    const planId = page.url().split("/").at(-1) as string;
    const saved = await call(`${server.baseUrl}/testplans/${planId}`, { headers: ci });
    expect(saved.body.steps).toEqual([
      { type: "instrumentation", shards: 3, sharding: "uniform", retry_failed_tests: 2 },
    ]);

    // Back in the form: the folded group says what is set and holds the saved values.
    await page.getByRole("link", { name: "Edit" }).click();
    const edited = page.getByRole("group", { name: "Step 1: instrumentation" });
    await edited.locator("summary", { hasText: "Shards and retries (3 set)" }).waitFor();
    await expect(edited.getByLabel("Shards", { exact: true }).inputValue()).resolves.toBe("3");
    await expect(edited.getByLabel("Split by").inputValue()).resolves.toBe("uniform");
    await expect(edited.getByLabel("Retry failed tests").inputValue()).resolves.toBe("2");
    await page.context().close();
  });
});
