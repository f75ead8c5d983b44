// Every page of the dashboard checked by axe-core (the accessibility engine browsers' own tools use) for the WCAG
// 2.1 A and AA rules it can test automatically (names and labels, contrast, landmarks, ARIA), in the light and the
// dark theme; and the keyboard path a person without a mouse takes. Needs the dashboard built (npm run build:web).
import { createRequire } from "node:module";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, type Person, seedDeviceRun, seedInspectRuns } from "./sample-data.ts";
import { flakyTest, seedShardedRun } from "./sharded-sample.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

const axeScript = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

let server: TestServer;
let browser: Browser;
let person: Person;
let failedRun: string;
let shardedRun: string;
let planId: string;

/** The dashboard's pages, each with what shows it is loaded (paths are read once the sample runs are seeded). */
const pages: { path: () => string; name: string; ready: (page: Page) => Promise<unknown> }[] = [
  { name: "runs", path: () => "/runs", ready: (page) => page.locator("tbody tr").first().waitFor() },
  {
    name: "a failed run",
    path: () => `/runs/${failedRun}`,
    ready: (page) => page.getByRole("heading", { name: /All tests \(120\)/ }).waitFor(),
  },
  {
    // Shards grouped under their device entry, and a flaky test's tries opened with their captures.
    name: "a sharded run with a flaky test's tries open",
    path: () => `/runs/${shardedRun}`,
    ready: async (page) => {
      await page.getByRole("heading", { name: /Passed on retry/ }).waitFor();
      await page.getByText("Tries (2): failed, then passed").click();
      await page.getByRole("region", { name: `Logcat of ${flakyTest.name}, try 1` }).waitFor();
    },
  },
  {
    name: "plans",
    path: () => "/plans",
    ready: (page) => page.getByRole("heading", { name: "Test plans" }).waitFor(),
  },
  {
    name: "a plan",
    path: () => `/plans/${planId}`,
    ready: (page) => page.getByRole("button", { name: "Trigger", exact: true }).waitFor(),
  },
  { name: "a new plan", path: () => "/plans/new", ready: (page) => page.getByLabel("Name").waitFor() },
  {
    name: "agents",
    path: () => "/agents",
    ready: (page) => page.getByRole("heading", { name: "Agents" }).waitFor(),
  },
  {
    name: "apps",
    path: () => "/apps",
    ready: (page) => page.getByRole("heading", { name: "Apps" }).waitFor(),
  },
  {
    name: "settings",
    path: () => "/settings",
    ready: (page) => page.getByRole("heading", { name: "Settings" }).waitFor(),
  },
];

/** A signed-in browser context per theme, made once and shared by that theme's page tests. */
const signedInByTheme = new Map<"light" | "dark", Promise<BrowserContext>>();
function signedIn(theme: "light" | "dark"): Promise<BrowserContext> {
  let context = signedInByTheme.get(theme);
  if (!context) {
    context = signedInContext(theme);
    signedInByTheme.set(theme, context);
  }
  return context;
}

async function signedInContext(theme: "light" | "dark"): Promise<BrowserContext> {
  // bypassCSP: axe is injected as an inline script, which the dashboard's own policy rightly refuses.
  const page = await openSignedIn(browser, server.origin, person, "/runs", {
    colorScheme: theme,
    bypassCSP: true,
  });
  await page.close();
  return page.context();
}

async function violationsOf(page: Page): Promise<Violation[]> {
  await page.addScriptTag({ path: axeScript });
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(context: unknown, options: unknown): Promise<{ violations: Violation[] }> };
      }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
}

const readable = (violations: Violation[]) =>
  violations
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}\n${v.nodes.map((n) => `    ${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("\n")}`,
    )
    .join("\n");

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  const ci = await ciHeaders(server);
  person = await createMember(server, "alex@example.com");
  const inspect = await seedInspectRuns(server, ci);
  planId = (await call(`${server.baseUrl}/executions/${inspect.failed}`, { headers: ci })).body.test_plan_id;
  failedRun = await seedDeviceRun(server, ci, { finish: true, branch: "main" });
  shardedRun = await seedShardedRun(server, ci);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

// One test per page and theme: each has the whole test timeout to itself, and a failure names its page.
describe("axe-core finds no WCAG 2.1 A/AA violation", () => {
  for (const theme of ["light", "dark"] as const) {
    it(`on the sign-in page, ${theme} theme`, async () => {
      const page = await browser.newPage({ colorScheme: theme, bypassCSP: true });
      await page.goto(`${server.origin}/sign-in`);
      await page.getByRole("heading", { name: "Sign in to Testbay" }).waitFor();
      const violations = await violationsOf(page);
      await page.close();
      expect(violations, readable(violations)).toEqual([]);
    });

    for (const { name, path, ready } of pages) {
      it(`on ${name}, ${theme} theme`, async () => {
        const page = await (await signedIn(theme)).newPage();
        await page.goto(`${server.origin}${path()}`);
        await ready(page);
        const violations = await violationsOf(page);
        await page.close();
        expect(violations, `${path()}:\n${readable(violations)}`).toEqual([]);
      });
    }
  }
});

describe("the keyboard", () => {
  it("reaches the skip link first, then the sections, and opens a failure's stack trace", async () => {
    const context = await signedInContext("light");
    const page = await context.newPage();
    await page.goto(`${server.origin}/runs/${failedRun}`);
    await page.getByRole("heading", { name: /Failed tests/ }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to the page");
    await page.keyboard.press("Enter");
    // Past the skip link, the next Tab lands inside the page, not in the navigation again.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => Boolean(document.activeElement?.closest("main")))).toBe(true);

    const stack = page.getByText("Stack trace").first();
    await stack.focus();
    await page.keyboard.press("Enter");
    await expect(
      stack.evaluate((summary) => (summary.parentElement as HTMLDetailsElement).open),
    ).resolves.toBe(true);
    await context.close();
  });
});
