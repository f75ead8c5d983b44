// The Apps pages end to end, in Debian's chromium against a real server: a viewer opens the apps list, then an
// app with two uploaded versions (the older one with a test package and six runs), and sees each version's size,
// SHA-256, what the server read from the binary, the test package and the runs; a deep link survives a reload;
// an unknown package says so. Needs the dashboard built first (npm run build:web).
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import {
  ciHeaders,
  type InspectRuns,
  organization,
  type Person,
  seedInspectRuns,
  waitUntilFinished,
} from "./sample-data.ts";
import { fillSignIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

const fixtures = new URL("../../server/test/fixtures/binaries/", import.meta.url);

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let runs: InspectRuns;
let viewer: Person;
let ci: Record<string, string>;

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = await ciHeaders(server);
  // com.example.basic 1.2.3 with two runs (one passed, one failed) and a test package; a minute later 1.3.0,
  // with neither. And an iOS app nobody uploaded to yet.
  runs = await seedInspectRuns(server, ci);
  await uploadBasicTestPackage(server, ci, "1.2.3");
  // Four more passing runs of 1.2.3: six in all, of which the page shows the newest five.
  const plans = await call(`${server.baseUrl}/testplans?package_name=com.example.basic`, { headers: ci });
  const smoke = plans.body.items.find((plan: { name: string }) => plan.name === "Smoke: manifest").id;
  for (let n = 0; n < 4; n++) {
    server.clock.advance(1_000);
    const started = await call(`${server.baseUrl}/testplan/run`, {
      headers: ci,
      json: { test_plan_id: smoke, package_name: "com.example.basic", version: "1.2.3" },
    });
    expect(started.status).toBe(200);
    await waitUntilFinished(server, ci, started.body.execution.id);
  }
  server.clock.advance(60_000);
  await registerBasicApp(server, ci, "1.3.0");
  server.clock.advance(60_000);
  const shop = await call(`${server.baseUrl}/apps`, {
    headers: ci,
    json: { package_name: "com.example.shop", platform: "ios", display_name: "Shop" },
  });
  expect(shop.status).toBe(201);
  // And an app with native code and eleven builds: more than a page of versions. (Registered a second later: apps
  // of one millisecond are ordered by their random IDs.)
  server.clock.advance(1_000);
  await call(`${server.baseUrl}/apps`, {
    headers: ci,
    json: { package_name: "com.example.abis", platform: "android" },
  });
  const abis = await readFile(new URL("app-debuggable-abis.apk", fixtures));
  for (let n = 1; n <= 11; n++) {
    server.clock.advance(1_000);
    const upload = await fetch(`${server.baseUrl}/apps/com.example.abis/versions/0.${n}.0`, {
      method: "PUT",
      headers: ci,
      body: abis,
    });
    expect(upload.status).toBe(201);
  }

  const account = await server.app.services.people.createUser({
    email: "vera@example.com",
    role: "viewer",
    org: organization,
  });
  viewer = { email: "vera@example.com", password: account.password };
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // The SHA-256's copy button writes to the clipboard; the test reads it back.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
  page = await context.newPage();
  page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
  await page.goto(`${server.origin}/apps`);
  await page.waitForURL(/\/sign-in/);
  await fillSignIn(page, viewer);
  await page.waitForURL(`${server.origin}/apps`);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const versionCard = (version: string): Locator =>
  page.getByRole("article").filter({ has: page.getByRole("heading", { name: version, exact: true }) });

/** The text of a fact (a dt/dd pair) of a card: the dd after the dt that says `label`. */
const fact = (scope: Locator, label: string): Locator =>
  scope.locator("dt", { hasText: new RegExp(`^${label}$`) }).locator("xpath=following-sibling::dd[1]");

describe("apps in the dashboard", () => {
  it("lists the apps newest first, with their number of versions and the latest one", async () => {
    await page.getByRole("heading", { name: "Apps", exact: true }).waitFor();
    const rows = page.locator("tbody tr");
    await rows.nth(2).waitFor();
    await expect(rows.allTextContents()).resolves.toEqual([
      expect.stringMatching(/^com\.example\.abisAndroid110\.11\.0/),
      expect.stringMatching(/^Shopcom\.example\.shopiOS0none yet/),
      expect.stringMatching(/^com\.example\.basicAndroid21\.3\.0/),
    ]);
    const basic = rows.filter({ hasText: "com.example.basic" });
    await expect(
      basic.getByRole("link", { name: "Runs of com.example.basic" }).getAttribute("href"),
    ).resolves.toBe("/runs?app=com.example.basic");
    await expect(
      basic.getByRole("link", { name: "Test plans of com.example.basic" }).getAttribute("href"),
    ).resolves.toBe("/plans?app=com.example.basic");
  });

  it("opens an app: its versions newest first, each with size, SHA-256, what the binary says, test package and runs", async () => {
    await page.getByRole("link", { name: "com.example.basic", exact: true }).click();
    await page.waitForURL(`${server.origin}/apps/com.example.basic`);
    await page.getByRole("heading", { name: "com.example.basic", level: 1 }).waitFor();
    await versionCard("1.2.3").waitFor();
    await expect(page.getByRole("heading", { level: 3 }).allTextContents()).resolves.toEqual([
      "1.3.0",
      "1.2.3",
    ]);

    const older = versionCard("1.2.3");
    const apk = await readFile(new URL("app-basic.apk", fixtures));
    const sha256 = createHash("sha256").update(apk).digest("hex");
    // Human units, the exact bytes on hover. (The card's first facts are its file's; its test package's follow.)
    await expect(fact(older, "Size").first().textContent()).resolves.toMatch(/^8\.3 KB/);
    await expect(fact(older, "Size").first().locator("[title]").getAttribute("title")).resolves.toMatch(
      /^8[,.\s ]?536 bytes$/,
    );
    const shown = fact(older, "SHA-256").first().locator("code");
    await expect(shown.textContent()).resolves.toBe(`${sha256.slice(0, 12)}…`);
    await expect(shown.getAttribute("title")).resolves.toBe(sha256);

    // What the server read from the APK's manifest (the fixture's README lists it).
    const binary = older.getByRole("region", { name: "Read from the binary" });
    await expect(fact(binary, "Format").textContent()).resolves.toBe("APK");
    await expect(fact(binary, "Version name").textContent()).resolves.toBe("1.2.3");
    await expect(fact(binary, "Version code").textContent()).resolves.toBe("42");
    await expect(fact(binary, "Min SDK").textContent()).resolves.toBe("API 24 (Android 7.0)");
    await expect(fact(binary, "Target SDK").textContent()).resolves.toBe("API 34 (Android 14)");
    await expect(fact(binary, "Debuggable").textContent()).resolves.toBe("no");
    await binary.getByText("Permissions (2)").click();
    await binary.getByText("CAMERA", { exact: true }).waitFor();
    await binary.getByText("INTERNET", { exact: true }).waitFor();

    // The test package, read from its own manifest.
    const tests = older.getByRole("region", { name: "Test package" });
    const testApk = await readFile(new URL("app-basic-androidTest.apk", fixtures));
    const testSha = createHash("sha256").update(testApk).digest("hex");
    await expect(fact(tests, "Test package").textContent()).resolves.toBe("com.example.basic.test");
    await expect(fact(tests, "Runner").textContent()).resolves.toBe(
      "androidx.test.runner.AndroidJUnitRunner",
    );
    await expect(fact(tests, "Instruments").textContent()).resolves.toBe("com.example.basic");
    await expect(fact(tests, "Size").locator("[title]").getAttribute("title")).resolves.toMatch(
      /^8[,.\s ]?476 bytes$/,
    );
    await expect(fact(tests, "SHA-256").locator("code").getAttribute("title")).resolves.toBe(testSha);

    // Its newest five runs of six, newest first, each with its plan and status, and where the others are.
    const olderRuns = older.getByRole("region", { name: "Runs" });
    await expect(olderRuns.getByRole("listitem").allTextContents()).resolves.toEqual([
      ...Array(4).fill(expect.stringMatching(/^passedSmoke: manifest/)),
      expect.stringMatching(/^failedRelease gate: target SDK/),
    ]);
    await olderRuns.getByText("The newest 5 runs of this version.").waitFor();
    await expect(
      olderRuns.getByRole("link", { name: "All runs of 1.2.3" }).getAttribute("href"),
    ).resolves.toBe("/runs?app=com.example.basic&version=1.2.3");

    // The newer version: nothing run on it, no test package.
    const newer = versionCard("1.3.0");
    await newer.getByText("latest", { exact: true }).waitFor();
    await newer.getByRole("region", { name: "Runs" }).getByText("No runs of this version yet.").waitFor();
    await newer
      .getByRole("region", { name: "Test package" })
      .getByText(/^None\. Upload the test APK with/)
      .waitFor();
  });

  it("copies the whole SHA-256", async () => {
    const older = versionCard("1.2.3");
    await older.getByRole("button", { name: "Copy the SHA-256 of com.example.basic 1.2.3" }).click();
    await older.getByText("Copied", { exact: true }).waitFor();
    const sha256 = createHash("sha256")
      .update(await readFile(new URL("app-basic.apk", fixtures)))
      .digest("hex");
    // A string, not a function: this file is type-checked for Node, which has no navigator.
    await expect(page.evaluate("navigator.clipboard.readText()")).resolves.toBe(sha256);
  });

  it("downloads a version's binary and its test package with the session", async () => {
    const older = versionCard("1.2.3");
    const binary = await older
      .getByRole("link", { name: /^Download com\.example\.basic 1\.2\.3/ })
      .getAttribute("href");
    const testPackage = await older
      .getByRole("link", { name: "Download the test package of com.example.basic 1.2.3" })
      .getAttribute("href");
    for (const [href, file] of [
      [binary, "app-basic.apk"],
      [testPackage, "app-basic-androidTest.apk"],
    ] as const) {
      const response = await context.request.get(`${server.origin}${href}`);
      expect(response.status(), String(href)).toBe(200);
      expect(Buffer.compare(await response.body(), await readFile(new URL(file, fixtures)))).toBe(0);
    }
  });

  it("opens a version's run from its list", async () => {
    await versionCard("1.2.3").getByRole("link", { name: "Release gate: target SDK" }).click();
    await page.waitForURL(`${server.origin}/runs/${runs.failed}`);
    await page.getByRole("heading", { name: /com\.example\.basic/ }).waitFor();
  });

  it("opens an app from a deep link, and again after a reload", async () => {
    await page.goto(`${server.origin}/apps/com.example.basic`);
    await versionCard("1.3.0").waitFor();
    await page.reload();
    await versionCard("1.2.3").waitFor();
    await page.getByRole("heading", { name: "com.example.basic", level: 1 }).waitFor();
  });

  it("says an unknown app is not found, and names the registered one when only the case differs", async () => {
    await page.goto(`${server.origin}/apps/com.example.nope`);
    await page.getByRole("heading", { name: "App not found" }).waitFor();
    await page.getByRole("alert").getByText("No app is registered as com.example.nope.").waitFor();
    await page.getByRole("link", { name: "See all apps" }).waitFor();

    await page.goto(`${server.origin}/apps/com.example.BASIC`);
    await page.getByRole("heading", { name: "App not found" }).waitFor();
    await page.getByRole("link", { name: "Open com.example.basic" }).click();
    await page.waitForURL(`${server.origin}/apps/com.example.basic`);
    await versionCard("1.2.3").waitFor();
  });

  it("pages an app's versions, ten at a time, by a cursor in the URL", async () => {
    await page.goto(`${server.origin}/apps/com.example.abis`);
    const versions = page.getByRole("heading", { level: 3 });
    await versionCard("0.2.0").waitFor();
    await expect(versions.allTextContents()).resolves.toEqual(
      Array.from({ length: 10 }, (_, index) => `0.${11 - index}.0`),
    );
    // What this APK's manifest and native libraries say.
    const binary = versionCard("0.11.0").getByRole("region", { name: "Read from the binary" });
    await expect(fact(binary, "Native ABIs").textContent()).resolves.toBe("arm64-v8a, x86_64");
    await expect(fact(binary, "Debuggable").textContent()).resolves.toBe("yes");
    await expect(fact(binary, "Min SDK").textContent()).resolves.toBe("API 21 (Android 5.0)");
    await expect(binary.getByText("Requests no permissions.").count()).resolves.toBe(1);

    await page.getByRole("link", { name: "Older versions →" }).click();
    await page.waitForURL(/\/apps\/com\.example\.abis\?cursor=/);
    await versionCard("0.1.0").waitFor();
    await expect(versions.allTextContents()).resolves.toEqual(["0.1.0"]);
    await expect(page.getByRole("link", { name: "Older versions →" }).count()).resolves.toBe(0);
    // The page of older versions is a link of its own.
    await page.reload();
    await versionCard("0.1.0").waitFor();
    await page.getByRole("link", { name: "← Newest versions" }).click();
    await versionCard("0.11.0").getByText("latest", { exact: true }).waitFor();
  });

  it("shows a person of another organization none of these apps, and how to upload the first one", async () => {
    await server.app.services.clients.createOrganization("globex");
    const account = await server.app.services.people.createUser({
      email: "gil@example.com",
      role: "member",
      org: "globex",
    });
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const otherPage = await other.newPage();
    await otherPage.goto(`${server.origin}/sign-in?redirect=/apps`);
    await otherPage.getByLabel("Email").fill("gil@example.com");
    await otherPage.getByLabel("Password").fill(account.password);
    await otherPage.getByRole("button", { name: "Sign in" }).click();
    await otherPage.waitForURL(`${server.origin}/apps`);
    await otherPage.getByText("No apps yet.").waitFor();
    await otherPage.getByText(/testbay upload --app com\.example\.shop --version 1\.0\.0/).waitFor();
    // Another organization's app is one it does not have.
    await otherPage.goto(`${server.origin}/apps/com.example.basic`);
    await otherPage.getByRole("heading", { name: "App not found" }).waitFor();
    await other.close();
  });

  it("shows the apps as cards on a phone", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.origin}/apps`);
    const card = page.getByRole("listitem").filter({ hasText: "com.example.basic" });
    await card.getByText("Android · 2 versions").waitFor();
    await expect(page.locator("table").isVisible()).resolves.toBe(false);
  });
});
