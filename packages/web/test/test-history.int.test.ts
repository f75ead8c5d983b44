// A failed test's history on a run's page: one GET /v1/tests for the page says of each failure whether it is new,
// flaky or a regression, and a live run reads it again once, when it finishes. The plan's runs are reported
// through the agent protocol. Needs the dashboard built first (npm run build:web).
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./browser.ts";
import { createMember, type Person } from "./sample-data.ts";
import { type Case, openShopSite, type ShopSite } from "./shop-plan.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let shop: ShopSite;
let browser: Browser;
let person: Person;

/** A run of the plan; a failed attempt is re-queued (max_attempts 2) and reports `retry`, or the same again. */
async function run(cases: Case[], retry?: Case[]): Promise<string> {
  const id = await shop.trigger();
  const lease = await shop.claim();
  await shop.report(lease, cases);
  if ((await shop.complete(lease, cases)).requeued) {
    const again = await shop.claim();
    await shop.report(again, retry ?? cases);
    await shop.complete(again, retry ?? cases);
  }
  return id;
}

const historyOf = (page: Page, test: string) =>
  page.getByRole("region", { name: "Failed tests" }).getByRole("listitem").filter({ hasText: test }).first();

beforeAll(async () => {
  requireWebBuild();
  shop = await openShopSite();
  person = await createMember(shop.server, "lee@example.com");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await shop?.server.close();
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

    const page = await openSignedIn(browser, shop.server.origin, person);
    const asked: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/v1/tests") asked.push(request.url());
    });
    await page.goto(`${shop.server.origin}/runs/${runId}`);
    await page.getByRole("heading", { name: "Failed tests (3)" }).waitFor();
    await historyOf(page, "addsToCart").getByText("Passed the last 2 runs before this one").waitFor();
    await historyOf(page, "checksOut").getByText("Flaky: passed after failing in 1 of 3 runs").waitFor();
    await historyOf(page, "searches").getByText("New: first run of this test").waitFor();
    // One request for the page, not one per failure.
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain(`test_plan_id=${shop.planId}`);
    await page.context().close();
  });

  it("reads a live run's history once while it runs and once when it finishes, not on every event", async () => {
    const runId = await shop.trigger();
    const lease = await shop.claim();
    const cases: Case[] = [["addsToCart", "failed"]];
    await shop.report(lease, cases);

    const page = await openSignedIn(browser, shop.server.origin, person);
    let asked = 0;
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/v1/tests") asked++;
    });
    await page.goto(`${shop.server.origin}/runs/${runId}`);
    // While it runs, its history is the three runs before it.
    await historyOf(page, "addsToCart").getByText("Failed 1 of the last 3 runs").waitFor();
    // More results stream in: the failures are read again, the history is not.
    await shop.report(lease, [["checksOut", "passed"]], 1);
    await page.getByRole("row").filter({ hasText: "checksOut" }).first().waitFor();
    expect(asked).toBe(1);

    // The run fails (both attempts): its own failure joins the history.
    await shop.complete(lease, cases);
    const again = await shop.claim();
    await shop.report(again, cases);
    await shop.complete(again, cases);
    await historyOf(page, "addsToCart").getByText("Failed 2 of the last 4 runs").waitFor();
    expect(asked).toBe(2);
    await page.context().close();
  });
});
