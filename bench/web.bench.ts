// The dashboard in headless Chromium with a big run: a run of 5,000 test cases (200 failed) opens to its first
// failure, and its virtualized test table scrolls. Baseline of the same build in the same run: the dashboard's
// "no such page" (the same JavaScript, the same session check and layout, no data), opened alternately with
// the run's page. Needs `npm run build` (or build:web) and Debian's chromium.
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { call, registerBasicApp, startTestServer, type TestServer } from "../packages/server/test/harness.ts";
import { launchChromium } from "../packages/web/test/browser.ts";
import { requireWebBuild } from "../packages/web/test/web-build.ts";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { median } from "./lib/stats.ts";
import { type BenchResult, type RunOptions, ratio, type Target } from "./lib/types.ts";

export const name = "web";
export const description =
  "a 5,000-test run's page in headless Chromium: time to its first failure, scrolling fps, initial JavaScript";

const firstFailureTargetMs = 1000;
const fpsTarget: Target = { op: ">=", value: 50 };
const initialJsTargetKb = 250;
const plans = { full: { rounds: 7, scrollMs: 3000 }, quick: { rounds: 2, scrollMs: 1000 } };
const tests = { total: 5000, failed: 200 };
const person = { email: "bench@example.com", password: "" };

/**
 * Records, from inside the page, when the first failed test and the "no such page" text are in the DOM. A string:
 * tsx would add its function-naming helper to a function's source, which the page does not have.
 */
const markWhenRendered = `
  const look = () => {
    if (window.firstFailureAt === undefined && document.querySelector('section[aria-labelledby="failed-tests"] li')) {
      window.firstFailureAt = performance.now();
    }
    if (window.notFoundAt === undefined && document.body?.textContent?.includes("No such page")) {
      window.notFoundAt = performance.now();
    }
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true });

  // Counts the frames drawn in ms; with a selector, scrolls that element 600 px in each of them.
  window.framesPerSecond = (selector, ms) =>
    new Promise((resolve, reject) => {
      const scroller = selector === null ? null : document.querySelector(selector);
      if (selector !== null && !scroller) reject(new Error("nothing matches " + selector));
      let frames = 0;
      const started = performance.now();
      const frame = (now) => {
        frames++;
        if (scroller) scroller.scrollTop = (scroller.scrollTop + 600) % (scroller.scrollHeight - scroller.clientHeight);
        if (now - started < ms) requestAnimationFrame(frame);
        else resolve((frames * 1000) / (now - started));
      };
      requestAnimationFrame(frame);
    });
`;

type FramesPerSecond = (selector: string | null, ms: number) => Promise<number>;

/** Frames per second the page draws in `ms`, scrolling the element `selector` names (none: just drawing). */
const framesPerSecond = (page: Page, selector: string | null, ms: number) =>
  page.evaluate(
    ([selector, ms]) =>
      (globalThis as unknown as { framesPerSecond: FramesPerSecond }).framesPerSecond(selector, ms as number),
    [selector, ms] as const,
  );

/** A run reported the way an agent does: 5,000 test cases in batches of 64, every 25th one failed. */
async function seedBigRun(server: TestServer, ci: Record<string, string>): Promise<string> {
  const agent = { "x-api-key": await server.token(await server.createClient("default", "agent")) };
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "Big suite",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  if (plan.status !== 201) throw new Error(`plan: ${plan.status} ${JSON.stringify(plan.body)}`);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  const id = run.body.execution.id as string;
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "bench-lab", devices: [], step_types: ["inspect"] },
  });
  const lease = claimed.body.job.lease_id as string;
  const every = tests.total / tests.failed;
  const cases = Array.from({ length: tests.total }, (_, i) => {
    const failed = i % every === every - 1;
    const classname = `com.example.feature${Math.floor(i / 100)}.Screen${Math.floor(i / 10) % 10}Test`;
    const testName = `scenario${i}_showsTheExpectedState`;
    return {
      seq: i,
      type: "test_case",
      step_index: 0,
      classname,
      name: testName,
      status: failed ? "failed" : "passed",
      message: failed ? `expected:<${i}> but was:<${i + 1}>` : null,
      details: failed
        ? [
            `java.lang.AssertionError: expected:<${i}> but was:<${i + 1}>`,
            "\tat org.junit.Assert.fail(Assert.java:89)",
            `\tat ${classname}.${testName}(Screen.kt:${40 + (i % 50)})`,
            "\tat androidx.test.runner.AndroidJUnit4ClassRunner.run(AndroidJUnit4ClassRunner.java:162)",
          ].join("\n")
        : null,
      duration_ms: 200 + ((i * 37) % 1800),
    };
  });
  for (let start = 0; start < cases.length; start += 64) {
    const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
      headers: agent,
      json: { events: cases.slice(start, start + 64) },
    });
    if (sent.status !== 200) throw new Error(`events: ${sent.status} ${JSON.stringify(sent.body)}`);
  }
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: {
      status: "failed",
      summary: { tests: tests.total, passed: tests.total - tests.failed, failed: tests.failed, skipped: 0 },
    },
  });
  if (done.status !== 200) throw new Error(`complete: ${done.status} ${JSON.stringify(done.body)}`);
  return id;
}

/** A signed-in browser context whose pages start with an empty cache (a first visit of the day). */
async function signedInContext(browser: Browser, origin: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${origin}/sign-in`);
  await page.getByLabel("Email").fill(person.email);
  await page.getByLabel("Password").fill(person.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${origin}/runs`);
  await page.close();
  await context.addInitScript(markWhenRendered);
  return context;
}

/** Opens a page with the cache off and returns when `mark` was set, in ms since the navigation started. */
async function timeToRendered(context: BrowserContext, url: string, mark: "firstFailureAt" | "notFoundAt") {
  const page = await context.newPage();
  const session = await context.newCDPSession(page);
  await session.send("Network.setCacheDisabled", { cacheDisabled: true });
  await page.goto(url);
  await page
    .waitForFunction(
      (key) => (globalThis as unknown as Record<string, number | undefined>)[key] !== undefined,
      mark,
      { timeout: 30_000 },
    )
    .catch(async (error: Error) => {
      const shot = path.join(os.tmpdir(), `web-bench-${mark}.png`);
      await page.screenshot({ path: shot });
      throw new Error(`${url} never showed what ${mark} waits for (the page: ${shot}): ${error.message}`);
    });
  const ms = await page.evaluate((key) => (globalThis as unknown as Record<string, number>)[key], mark);
  return { page, ms: ms as number };
}

/** The JavaScript a first visit to `url` downloads before its first failure shows, gzipped as a server would. */
async function initialJavaScript(
  context: BrowserContext,
  url: string,
): Promise<{ files: number; gzipKb: number }> {
  const page = await context.newPage();
  const bodies: Promise<Buffer>[] = [];
  page.on("response", (response) => {
    if (response.request().resourceType() === "script") bodies.push(response.body());
  });
  await page.goto(url);
  await page.waitForFunction(
    () => (globalThis as unknown as { firstFailureAt?: number }).firstFailureAt !== undefined,
  );
  const scripts = await Promise.all(bodies);
  await page.close();
  return {
    files: scripts.length,
    gzipKb: scripts.reduce((sum, body) => sum + gzipSync(body).length, 0) / 1024,
  };
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  requireWebBuild();
  const startedAt = new Date();
  const scope = new CleanupScope();
  try {
    log("starting a server (SQLite) and reporting a run of 5,000 tests, 200 failed");
    const server = await startTestServer({
      env: {
        TESTBAY_RATE_LIMIT_BURST: "1000000",
        TESTBAY_AGENT_RATE_LIMIT_BURST: "1000000",
        TESTBAY_LOG_LEVEL: "warn",
      },
    });
    scope.defer(() => server.close());
    const ci = { "x-api-key": await server.token(await server.createClient("default", "ci")) };
    await registerBasicApp(server, ci);
    const account = await server.app.services.people.createUser({
      email: person.email,
      role: "viewer",
      org: "default",
    });
    person.password = account.password;
    const runId = await seedBigRun(server, ci);

    const browser = await launchChromium();
    scope.defer(() => browser.close());
    const context = await signedInContext(browser, server.origin);
    const runUrl = `${server.origin}/runs/${runId}`;
    const emptyUrl = `${server.origin}/no-such-page`;
    const scroller = 'section[aria-labelledby="all-tests"] div.overflow-auto';

    const javascript = await initialJavaScript(context, runUrl);
    // A first round that is not counted: Chromium and the server warm up.
    for (const warm of [
      await timeToRendered(context, emptyUrl, "notFoundAt"),
      await timeToRendered(context, runUrl, "firstFailureAt"),
    ]) {
      await warm.page.close();
    }
    const empty: number[] = [];
    const firstFailure: number[] = [];
    const fps: number[] = [];
    const idleFps: number[] = [];
    for (let round = 1; round <= plan.rounds; round++) {
      log(
        `round ${round}/${plan.rounds}: the empty page, then the run's page to its first failure, then scrolling`,
      );
      const blank = await timeToRendered(context, emptyUrl, "notFoundAt");
      empty.push(blank.ms);
      // The frame rate of a page with nothing to draw: the ceiling this machine's headless Chromium reaches.
      idleFps.push(await framesPerSecond(blank.page, null, plan.scrollMs));
      await blank.page.close();
      const opened = await timeToRendered(context, runUrl, "firstFailureAt");
      firstFailure.push(opened.ms);
      await opened.page.locator(scroller).waitFor();
      await opened.page.getByRole("heading", { name: `All tests (${tests.total})` }).waitFor();
      fps.push(await framesPerSecond(opened.page, scroller, plan.scrollMs));
      await opened.page.close();
    }

    const firstFailureMs = median(firstFailure);
    const emptyMs = median(empty);
    const scrolling = median(fps);
    const met =
      firstFailureMs <= firstFailureTargetMs &&
      scrolling >= fpsTarget.value &&
      javascript.gzipKb <= initialJsTargetKb;
    return benchResult(quick, startedAt, {
      name,
      description,
      environment: { node: process.version, browser: browser.version(), rounds: plan.rounds },
      rows: [
        row('empty page of the build: "No such page" shown', empty, "ms"),
        row(`run page: first of ${tests.failed} failures shown (${tests.total} tests)`, firstFailure, "ms"),
      ],
      sections: [
        {
          title: "Frames per second",
          rows: [
            row("frames/s, a page drawing nothing (the ceiling)", idleFps, "fps"),
            row("frames/s, scrolling the 5,000-row test table 600 px a frame", fps, "fps"),
          ],
        },
        {
          title: "Initial JavaScript (first visit of the run's page, until its first failure shows)",
          rows: [
            {
              label: "scripts downloaded",
              metrics: [
                { label: "files", value: javascript.files, unit: "" },
                { label: "gzipped", value: javascript.gzipKb, unit: "KB", decimals: 1 },
                { label: "target", value: initialJsTargetKb, unit: "KB" },
              ],
            },
          ],
        },
      ],
      ratios: [
        ratio("first failure ÷ empty page (load time, for the trend)", firstFailureMs / emptyMs),
        ratio("scrolling fps ÷ idle fps", scrolling / median(idleFps)),
      ],
      notes: [
        `Targets: first failure ≤ ${firstFailureTargetMs} ms (median ${firstFailureMs.toFixed(0)} ms), scrolling ≥ ${fpsTarget.value} fps (median ${scrolling.toFixed(1)}), initial JavaScript ≤ ${initialJsTargetKb} KB gzipped (${javascript.gzipKb.toFixed(1)} KB).`,
        "Times are from the navigation's start to the moment the element is in the DOM (a MutationObserver in the page), with the browser cache off, signed in; 1440×900; the server on SQLite in this process.",
        "Rounds alternate the empty page and the run's page; medians. Scrolling moves the table 600 px in each animation frame and counts frames.",
      ],
      met,
      details: { empty, firstFailure, fps, idleFps, javascript },
    });
  } finally {
    await scope.close();
  }
}

function row(label: string, values: readonly number[], unit: string) {
  return {
    label,
    metrics: [
      { label: "median", value: median(values), unit, decimals: 1 },
      { label: "min", value: Math.min(...values), unit, decimals: 1 },
      { label: "max", value: Math.max(...values), unit, decimals: 1 },
    ],
  };
}
