// An Appium session for the dashboard to show (API.md §12), made the way a team's suite makes one: a real
// `testbay-agent --appium` process with the repository's Appium and Appium's fake driver (@appium/fake-driver, in a
// test APPIUM_HOME) on the stand-in adb lab's Android device, and a real webdriverio client at `/wd/hub`, as
// packages/agent/test/appium/agent-appium.int.test.ts starts them. Used by the session page's test
// (appium-session.int.test.ts) and by scripts/screenshots.ts.
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { remote } from "webdriverio";
import { type AgentProcess, startAgentProcess, stopAgentProcesses } from "../../agent/test/agent-process.ts";
import {
  FAKE_APP,
  type FakeDriverHome,
  fakeDriverAgentArgs,
  installFakeDriver,
} from "../../agent/test/appium/fake-driver-home.ts";
import { createDeviceLab, type DeviceLab } from "../../agent/test/stand-ins/device-lab.ts";
import type { TestServer } from "../../server/test/harness.ts";
import { organization } from "./sample-data.ts";

export const sessionSerial = "emulator-5554";
export const sessionAgentName = "appium-rack";
export const sessionName = "checkout: coupon applies";
/** What the client says failed (setSessionStatus), shown as the session's reason. */
export const sessionFailureReason = "checkout button never shown";
/** What the app logs as an error on the device while the session runs (the device log marks it). */
export const sessionDeviceError = "checkout hidden: the cart total did not load (HTTP 503)";
/** The element the suite looks for and the fake app does not have: its find command fails (404). */
export const missingElement = "//MockButton[@id='checkout']";

/** A device host offering Appium: the stand-in lab's Pixel 7 and an agent process started with --appium. */
export interface SessionLab {
  agent: AgentProcess;
  /** Writes a line into the device's log (logcat), as the app under test would. */
  deviceLog(level: "I" | "W" | "E", tag: string, message: string): Promise<void>;
  close(): Promise<void>;
}

export async function startSessionLab(server: TestServer): Promise<SessionLab> {
  const running: ChildProcess[] = [];
  let fake: FakeDriverHome | undefined;
  let lab: DeviceLab | undefined;
  const scratch = await mkdtemp(path.join(tmpdir(), "testbay-web-session-"));
  const close = async () => {
    await stopAgentProcesses(running);
    lab?.cleanup();
    await fake?.cleanup();
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    fake = await installFakeDriver();
    // Time scale 1: the stand-in's screen recording lasts as long as the session, as a device's does.
    lab = await createDeviceLab({
      devices: [{ serial: sessionSerial, model: "Pixel 7", release: "14", sdk: 34 }],
      timeScale: 1,
    });
    const agent = startAgentProcess({
      name: sessionAgentName,
      baseUrl: server.baseUrl,
      audience: server.config.audience,
      credentials: await server.createClient(organization, "agent"),
      scratch,
      // Apart from the agent's Appium suites' port ranges (appium-fleet has 25430-25529) and the benchmark's.
      args: fakeDriverAgentArgs("25530-25629"),
      env: { ...lab.env, APPIUM_HOME: fake.home },
      running,
    });
    const state = lab.env.FAKE_ADB_STATE;
    const deviceLog = async (level: string, tag: string, message: string) => {
      // The stand-in's log buffer is found through FAKE_ADB_STATE (stand-ins/state.mjs), set only for the call.
      const { log } = await import("../../agent/test/stand-ins/logcat.mjs");
      const before = process.env.FAKE_ADB_STATE;
      process.env.FAKE_ADB_STATE = state;
      try {
        log(sessionSerial, 8123, 8123, level, tag, message);
      } finally {
        if (before === undefined) delete process.env.FAKE_ADB_STATE;
        else process.env.FAKE_ADB_STATE = before;
      }
    };
    return { agent, deviceLog, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface SampleSession {
  id: string;
  /** What the client sent, in order, as commands.jsonl lists them: method and path below the session. */
  commands: Array<{ method: string; path: string; failed: boolean }>;
}

/**
 * One session through `/wd/hub` with the CI client's ID and secret (HTTP Basic): the page source, the
 * add-to-cart button found and clicked twice, its click count read, a checkout button looked for that the app
 * does not have (Appium answers 404), then the session marked failed with `setSessionStatus` (answered by Testbay,
 * not relayed) and ended with DELETE. While it runs, the server's clock (a manual one in tests) follows the real
 * one, so the session's start, end and duration read as they happened.
 */
export async function runSampleSession(
  server: TestServer,
  lab: SessionLab,
  credentials: { client_id: string; client_secret: string },
): Promise<SampleSession> {
  let last = Date.now();
  const follow = setInterval(() => {
    const now = Date.now();
    server.clock.advance(now - last);
    last = now;
  }, 50);
  try {
    const browser = await connect(server, lab, credentials, {
      name: sessionName,
      ci: { provider: "github", branch: "main", build_url: "https://ci.example.com/acme/app/runs/9" },
    });
    await browser.getPageSource();
    const button = await browser.findElement("xpath", "//MockButton[@id='add-to-cart']");
    const buttonId = (button as Record<string, string>)["element-6066-11e4-a52e-4f735466cecf"] as string;
    await browser.elementClick(buttonId);
    await lab.deviceLog("I", "ShopCart", "added item-1 (Espresso beans) to the cart");
    await browser.elementClick(buttonId);
    await lab.deviceLog("I", "ShopCart", "added item-1 (Espresso beans) to the cart");
    await browser.getElementAttribute(buttonId, "clicks");
    await lab.deviceLog("E", "ShopCheckout", sessionDeviceError);
    // The suite's failing check: Appium answers "no such element" (404), which webdriverio raises or returns.
    await Promise.resolve(browser.findElement("xpath", missingElement)).catch(() => undefined);
    await browser.execute(
      `testbay: ${JSON.stringify({ action: "setSessionStatus", status: "failed", reason: sessionFailureReason })}`,
    );
    await browser.deleteSession();
    const element = (suffix: string) => `/element/${buttonId}${suffix}`;
    return {
      id: browser.sessionId,
      commands: [
        { method: "GET", path: "/source", failed: false },
        { method: "POST", path: "/element", failed: false },
        { method: "POST", path: element("/click"), failed: false },
        { method: "POST", path: element("/click"), failed: false },
        { method: "GET", path: element("/attribute/clicks"), failed: false },
        { method: "POST", path: "/element", failed: true },
        { method: "DELETE", path: "", failed: false },
      ],
    };
  } finally {
    clearInterval(follow);
  }
}

/** A webdriverio session at Testbay's `/wd/hub` on the fake driver, with the CI client's ID and secret. */
async function connect(
  server: TestServer,
  lab: SessionLab,
  credentials: { client_id: string; client_secret: string },
  options: Record<string, unknown>,
) {
  const { port } = new URL(server.origin);
  return remote({
    hostname: "127.0.0.1",
    port: Number(port),
    path: "/wd/hub",
    protocol: "http",
    user: credentials.client_id,
    key: credentials.client_secret,
    logLevel: "silent",
    connectionRetryCount: 0,
    // The new session waits for the device, the agent's Appium and the fake driver's start.
    connectionRetryTimeout: 180_000,
    capabilities: {
      platformName: "Fake",
      "appium:automationName": "Fake",
      "appium:app": FAKE_APP,
      "testbay:options": { platform: "android", queue_timeout_seconds: 120, ...options },
    } as WebdriverIO.Capabilities,
  }).catch((error: Error) => {
    throw new Error(`${error.message}\nagent said:\n${lab.agent.output()}`);
  });
}

/**
 * A session opened and left running (one command sent, no video), as a page sees a session under way; `end`
 * deletes it unless it has ended already (a cancel).
 */
export async function openSampleSession(
  server: TestServer,
  lab: SessionLab,
  credentials: { client_id: string; client_secret: string },
): Promise<{ id: string; end(): Promise<void> }> {
  const browser = await connect(server, lab, credentials, { name: "left open", record_video: false });
  await browser.getPageSource();
  return { id: browser.sessionId, end: () => browser.deleteSession().catch(() => undefined) };
}

/** A long session: `count` page-source commands, then DELETE (passed), for the timeline's many rows. */
export async function runLongSession(
  server: TestServer,
  lab: SessionLab,
  credentials: { client_id: string; client_secret: string },
  count: number,
): Promise<string> {
  const browser = await connect(server, lab, credentials, { name: "long session", record_video: false });
  for (let n = 0; n < count; n++) await browser.getPageSource();
  await browser.deleteSession();
  return browser.sessionId;
}
