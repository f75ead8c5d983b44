// Files copied off the devices (issue 29, API.md §14) on a run's page, in Debian's chromium against a real server:
// what a plan's `pull` paths held, shard by shard as a file tree with sizes and downloads, and the coverage files,
// each in a section of its own, apart from the captures of test cases (the Artifacts section); neither section on a
// run that has none. Checked by axe-core in both themes. Needs the dashboard built first (npm run build:web).
import { createRequire } from "node:module";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { coverageName, failingTest, pulledFiles, seedDeviceFilesRun } from "./device-files-sample.ts";
import { ciHeaders, createMember, type Person, seedInspectRuns } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

const axeScript = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

let server: TestServer;
let browser: Browser;
let person: Person;
let ci: Record<string, string>;
let runId: string;
let runWithoutFiles: string;

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = await ciHeaders(server);
  runWithoutFiles = (await seedInspectRuns(server, ci)).passed;
  runId = await seedDeviceFilesRun(server, ci);
  person = await createMember(server);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const pulledCount = pulledFiles(0).length + pulledFiles(1).length;
const pulledSection = (page: Page) =>
  page.getByRole("region", { name: `Files pulled from the device (${pulledCount})` });
const shardGroup = (section: Locator, shard: number) =>
  section.locator("details").filter({
    has: section.page().locator("summary", { hasText: `shard ${shard + 1} of 2` }),
  });

describe("files pulled from the device", () => {
  it("are listed shard by shard as the device's folders, each file with its size and a download", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${runId}`);
    const section = pulledSection(page);
    await section.waitFor();
    // Each shard named by the device it ran on, with how many files it left and their size.
    // Which device claimed which shard is the server's choice: the page says the one the API says.
    const run = await call(`${server.baseUrl}/executions/${runId}`, { headers: ci });
    const serials = run.body.devices.map(
      (device: { claimed_device: { serial: string } }) => device.claimed_device.serial,
    );
    const first = shardGroup(section, 0);
    await first.locator("summary").first().getByText(`Pixel 8 · 14 · ${serials[0]} · shard 1 of 2`).waitFor();
    await expect(first.locator("summary").first().textContent()).resolves.toMatch(
      new RegExp(`\\(${pulledFiles(0).length} files · [\\d.]+ KB\\)$`),
    );
    // The device's folders: /sdcard holds both pulled paths, each a folder of its own.
    const folders = await first
      .locator("summary")
      .evaluateAll((summaries) =>
        summaries.slice(1).map((summary) => summary.textContent?.replace(/ \(.*/, "")),
      );
    expect(folders).toEqual(["/sdcard/", "allure-results/", "Pictures/screenshots/"]);

    // A file is a row of its folder, named as on the device, with its size.
    const name = "pulled/0/sdcard/Pictures/screenshots/home-2.png";
    const download = first.getByRole("link", { name: `Download ${name}`, exact: true });
    const row = download.locator("xpath=ancestor::li[1]");
    await expect(row.locator("xpath=ancestor::details[1]/summary").textContent()).resolves.toMatch(
      /^Pictures\/screenshots\/ \(2 files · /,
    );
    await row.getByText("home-2.png", { exact: true }).waitFor();
    const expected = pulledFiles(0).find((file) => file.name === name)?.body as Buffer;
    await row.getByText(`${(expected.length / 1024).toFixed(1)} KB`, { exact: true }).waitFor();

    // The download is the file the agent pulled, from the shard it came from.
    const href = (await download.getAttribute("href")) as string;
    expect(href).toContain("shard=0");
    const fetched = await page.request.get(`${server.origin}${href}`);
    expect(fetched.status()).toBe(200);
    expect(Buffer.from(await fetched.body()).equals(expected)).toBe(true);

    // A pulled picture previews in place, like any artifact.
    await row
      .getByRole("button", { name: "Preview pulled/0/sdcard/Pictures/screenshots/home-2.png" })
      .click();
    await expect
      .poll(() =>
        row
          .getByRole("img", { name: "home-2.png" })
          .evaluate((image: HTMLImageElement) => image.naturalWidth),
      )
      .toBeGreaterThan(0);

    // The second shard's files are its own, under the same device paths.
    const second = shardGroup(section, 1);
    await second
      .locator("summary")
      .first()
      .getByText(`Pixel 8 · 14 · ${serials[1]} · shard 2 of 2`)
      .waitFor();
    await second
      .getByRole("link", { name: "Download pulled/1/sdcard/Pictures/screenshots/home-4.png" })
      .waitFor();
    await expect(second.getByRole("link", { name: /^Download pulled\/0\// }).count()).resolves.toBe(0);
    await page.context().close();
  });

  it("fold by folder: a closed folder keeps only its row, opened again it lists its files", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${runId}`);
    const group = shardGroup(pulledSection(page), 0);
    const folder = group.locator("summary", { hasText: "Pictures/screenshots/" });
    const files = group.getByRole("link", { name: /^Download pulled\/0\/sdcard\/Pictures\/screenshots\// });
    await expect.poll(() => files.count()).toBe(2);
    await folder.click();
    await expect.poll(() => files.count()).toBe(0);
    // The other folder of the same shard is untouched.
    await group
      .getByRole("link", { name: /^Download pulled\/0\/sdcard\/allure-results\// })
      .first()
      .waitFor();
    await folder.click();
    await expect.poll(() => files.count()).toBe(2);
    // The shard's own disclosure folds all of it.
    await group.locator("summary").first().click();
    await expect.poll(() => group.getByRole("link").count()).toBe(0);
    // Folded contents are not in the page at all, hidden or not: a closed folder of thousands of files costs a row.
    // Polled: the links are hidden (so not counted above) as soon as the browser closes the disclosure, and their
    // rows leave the page with the re-render that follows (a CI run once read 9 rows in between).
    await expect.poll(() => group.locator("li").count()).toBe(0);
    await page.context().close();
  });

  it("leave the Artifacts section to the captures of test cases, and coverage has a section of its own", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${runId}`);
    const coverage = page.getByRole("region", { name: "Coverage (2)" });
    await coverage.waitFor();
    for (const shard of [0, 1]) {
      const group = shardGroup(coverage, shard);
      await group.getByText(`testbay-${shard}.ec`, { exact: true }).waitFor();
      await group.getByRole("link", { name: `Download ${coverageName(shard)}` }).waitFor();
    }
    // Execution data is not something a browser shows: a download only.
    await expect(coverage.getByRole("button", { name: /^Preview/ }).count()).resolves.toBe(0);

    const artifacts = page.getByRole("region", { name: "Artifacts (1)" });
    await artifacts.waitFor();
    await artifacts
      .getByRole("link", { name: `${failingTest.classname}.${failingTest.name}.png`, exact: false })
      .waitFor();
    await expect(
      artifacts.getByRole("link", { name: /^Download (pulled|coverage)\// }).count(),
    ).resolves.toBe(0);
    await page.context().close();
  });

  it("are not mentioned on a run that has none", async () => {
    const page = await openSignedIn(browser, server.origin, person, `/runs/${runWithoutFiles}`);
    await page.getByRole("heading", { name: /^Artifacts/ }).waitFor();
    await page.getByText(/No artifacts/).waitFor();
    await expect(page.getByRole("heading", { name: /Files pulled|Coverage/ }).count()).resolves.toBe(0);
    await page.context().close();
  });

  it("pass axe-core's WCAG A and AA rules in the light and the dark theme", async () => {
    for (const theme of ["light", "dark"] as const) {
      const page = await openSignedIn(browser, server.origin, person, `/runs/${runId}`, {
        colorScheme: theme,
        // axe is injected as an inline script, which the dashboard's own policy rightly refuses.
        bypassCSP: true,
      });
      await pulledSection(page).waitFor();
      await page.getByRole("region", { name: "Coverage (2)" }).waitFor();
      await page.addScriptTag({ path: axeScript });
      const violations = await page.evaluate(async () => {
        const axe = (
          globalThis as unknown as {
            axe: {
              run(
                context: unknown,
                options: unknown,
              ): Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }>;
            };
          }
        ).axe;
        const result = await axe.run(
          {
            include: ['[aria-labelledby="device-files-pulled"]', '[aria-labelledby="device-files-coverage"]'],
          },
          { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } },
        );
        return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      });
      expect(violations, theme).toEqual([]);
      await page.context().close();
    }
  });
});
