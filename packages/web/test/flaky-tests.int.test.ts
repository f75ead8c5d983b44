// The Flaky tests page, in Debian's chromium against a real server: a plan's test that failed and then passed on a
// retry is listed with its flaky rate and its last run, a steady one is not, and a member quarantines it from
// there with a reason. The runs are reported through the agent protocol. Needs the dashboard built first
// (npm run build:web).
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { createMember, type Person } from "./sample-data.ts";
import { type Case, openShopSite, type ShopSite } from "./shop-plan.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let shop: ShopSite;
let browser: Browser;
let person: Person;

/** Reports `cases` on the lease and completes it; answers whether the server re-queued a failed attempt. */
async function attempt(lease: string, cases: Case[]): Promise<boolean> {
  await shop.report(lease, cases);
  return (await shop.complete(lease, cases)).requeued === true;
}

beforeAll(async () => {
  requireWebBuild();
  shop = await openShopSite();
  // One run: checksOut fails, and passes on the re-queued attempt (flaky); addsToCart passes both times.
  await shop.trigger();
  const requeued = await attempt(await shop.claim(), [
    ["checksOut", "failed"],
    ["addsToCart", "passed"],
  ]);
  expect(requeued).toBe(true);
  await attempt(await shop.claim(), [
    ["checksOut", "passed"],
    ["addsToCart", "passed"],
  ]);
  person = await createMember(shop.server, "flo@example.com");
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await shop?.server.close();
});

describe("the Flaky tests page", () => {
  it("lists a plan's flaky tests with their rate and last run, and quarantines one", async () => {
    const page = await openSignedIn(browser, shop.server.origin, person, `/flaky?plan=${shop.planId}`);
    const flaky = page.getByRole("listitem", { name: "checksOut" });
    await flaky.getByText("100%").waitFor();
    await flaky.getByText("flaky (1 of 1 runs)").waitFor();
    await expect(flaky.getByRole("link").getAttribute("href")).resolves.toMatch(/^\/runs\/ex/);
    await expect(page.getByRole("listitem", { name: "addsToCart" }).count()).resolves.toBe(0);

    await flaky.getByRole("button", { name: "Quarantine…" }).click();
    const dialog = page.getByRole("dialog", { name: "Quarantine checksOut?" });
    await dialog.getByLabel("Reason").fill("Flaky since the cart redesign: SHOP-7");
    await dialog.getByRole("button", { name: "Quarantine", exact: true }).click();
    await flaky.getByText("Quarantined", { exact: true }).waitFor();
    const tests = await call(`${shop.server.baseUrl}/tests?test_plan_id=${shop.planId}`, {
      headers: shop.ci,
    });
    expect(tests.body.items.find((t: { name: string }) => t.name === "checksOut")).toMatchObject({
      quarantined: true,
      flaky_runs: 1,
      quarantine: { reason: "Flaky since the cart redesign: SHOP-7" },
    });
    await page.context().close();
  });
});
