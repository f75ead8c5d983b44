// A run watched from its page while a real agent runs it: the page is opened while the run waits in the queue,
// then a `testbay-agent` process (on the stateful adb stand-in: no Android device here) claims and runs it; the
// page turns running, then failed, with no reload, and the failure shows its message, its screenshot (loaded)
// and its logcat lines. In the scaled project the browser talks to one API instance and the agent to the other.
// Needs the dashboard built first (npm run build:web).
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentProcess, stopAgentProcesses } from "../../agent/test/agent-process.ts";
import { createDeviceLab, type DeviceLab, type Suite } from "../../agent/test/stand-ins/device-lab.ts";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, organization, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

const login = "com.example.basic.LoginTest";
const message = "java.lang.AssertionError: expected:<Welcome> but was:<Sign in>";
// Long enough (device time, real time here) that the run is seen running before it ends.
const suite: Suite = {
  tests: [
    { class: login, method: "signsIn", outcome: "pass", duration_ms: 2_500, logcat: ["D/Login: form shown"] },
    {
      class: login,
      method: "rejectsBadPassword",
      outcome: "fail",
      duration_ms: 800,
      stack: `${message}\n\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:42)`,
      logcat: ["W/Login: bad password for ann@example.com", "E/Login: sign-in refused: 401"],
    },
    { class: "com.example.basic.CartTest", method: "addsItem", outcome: "pass", duration_ms: 2_500 },
  ],
};

let server: TestServer;
/** The instance the browser uses, and the one the agent reports to (the other one when scaled). */
let watched: TestServer;
let acting: TestServer;
let browser: Browser;
let person: Person;
let ci: Record<string, string>;
let lab: DeviceLab;
let scratch: string;
const running: ChildProcess[] = [];

async function triggerInstrumentation(): Promise<string> {
  const plan = await call(`${acting.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "Login: instrumentation",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "instrumentation", record_video: "on_failure" }],
    },
  });
  expect(plan.status).toBe(201);
  const run = await call(`${acting.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

const signedInPage = (pathname: string) => openSignedIn(browser, watched.origin, person, pathname);

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  watched = server.instances[0] ?? server;
  acting = server.instances.at(-1) ?? server;
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  await uploadBasicTestPackage(server, ci);
  person = await createMember(server, "omar@example.com");
  lab = await createDeviceLab({
    devices: [{ serial: "emulator-5554", model: "Pixel 7", release: "14", sdk: 34 }],
    suites: { "com.example.basic.test": suite },
    timeScale: 1,
  });
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-live-run-"));
  browser = await launchChromium();
});

afterAll(async () => {
  await stopAgentProcesses(running);
  await browser?.close();
  await server?.close();
  lab?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe("a run watched while an agent runs it", () => {
  it("turns running, then failed, without reload; the failure shows its message, screenshot and logcat", async () => {
    const id = await triggerInstrumentation();
    const page = await signedInPage(`/runs/${id}`);
    const header = page.locator("main header");
    await header.getByText("queued", { exact: true }).waitFor();
    // A mark in the page's memory: a reload would lose it.
    await page.evaluate(() => {
      (window as unknown as { unreloaded: boolean }).unreloaded = true;
    });

    // Only now does an agent come: it finds the stand-in device and claims the run.
    const agent = startAgentProcess({
      name: "rack-7",
      baseUrl: acting.baseUrl,
      audience: server.config.audience,
      credentials: await server.createClient(organization, "agent"),
      scratch,
      args: ["--devices", "auto"],
      env: lab.env,
      running,
    });
    try {
      await header.getByText("running", { exact: true }).waitFor({ timeout: 60_000 });
      await header.getByText("failed", { exact: true }).waitFor({ timeout: 60_000 });
    } catch (error) {
      console.error(agent.output());
      throw error;
    }
    expect(await page.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded)).toBe(true);

    // The failure, first on the page: its message…
    await page.getByRole("heading", { name: "Failed tests (1)" }).waitFor();
    const failure = page.getByRole("region", { name: "Failed tests" }).getByRole("listitem").first();
    await failure.getByText("rejectsBadPassword", { exact: true }).waitFor();
    await failure.getByText(message, { exact: true }).waitFor();

    // …the screenshot the agent took of it, loaded (a broken image has no natural width)…
    const screenshot = failure.getByAltText("Screenshot of rejectsBadPassword when it failed").first();
    await screenshot.waitFor();
    await expect
      .poll(() => screenshot.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth), {
        timeout: 15_000,
      })
      .toBeGreaterThan(0);

    // …and its logcat lines: the test's own, not the test before it.
    const logcat = failure.getByRole("region", { name: "Logcat of rejectsBadPassword" });
    await logcat.getByText("bad password for ann@example.com").waitFor();
    await logcat.getByText("sign-in refused: 401").waitFor();
    expect(await logcat.textContent()).not.toContain("form shown");

    // The video segment it failed in, with where in it the agent saw the failure.
    const tests = await call(`${acting.baseUrl}/executions/${id}/tests?status=failed`, { headers: ci });
    const offset = tests.body.items[0].video_offset_ms as number;
    expect(offset).toBeGreaterThan(0);
    await failure.getByText(/^Fails at \d+:\d\d of part-01\.mp4; opens at \d+:\d\d$/).waitFor();
    await failure.getByRole("link", { name: "Download video (part-01.mp4)" }).waitFor();
    await page.context().close();
  });
});
