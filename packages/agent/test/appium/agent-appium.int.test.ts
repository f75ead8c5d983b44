/**
 * An Appium session end to end through Testbay (API.md §12; docs/appium-relay.md): a real server on a port, a real
 * `testbay-agent --appium` process (bin/testbay-agent.js, as an operator starts it) with the repository's `appium`
 * and Appium's own fake driver in a test APPIUM_HOME, on the stand-in Android lab's device, and a real
 * `webdriverio` client that creates the session at `/wd/hub`, sends commands through the relay and deletes it.
 * The fake driver's platformName is "Fake": `testbay:options.platform` picks the Android device for it.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { remote } from "webdriverio";
import type { IssuedCredentials } from "../../../server/src/features/clients/index.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { isPortFree } from "../../src/appium/port-blocks.ts";
import { type AgentProcess, startAgentProcess, stopAgentProcesses, waitFor } from "../agent-process.ts";
import { createAppleLab } from "../stand-ins/apple-lab.ts";
import { createDeviceLab, type DeviceLab } from "../stand-ins/device-lab.ts";
import { FAKE_APP, type FakeDriverHome, fakeDriverAgentArgs, installFakeDriver } from "./fake-driver-home.ts";

let server: TestServer;
let ci: Record<string, string>;
let ciCredentials: IssuedCredentials;
let agentCredentials: { client_id: string; client_secret: string };
let scratch: string;
let fake: FakeDriverHome;
let lab: DeviceLab;
const running: ChildProcess[] = [];

const SERIAL = "emulator-5554";

function startAgent(
  name: string,
  extraArgs: string[] = [],
  allowLocalApps = true,
  labEnv: Record<string, string> = lab.env,
): AgentProcess {
  return startAgentProcess({
    name,
    baseUrl: server.baseUrl,
    audience: server.config.audience,
    credentials: agentCredentials,
    scratch,
    // Apart from the other Appium suites' ranges (appium-session/appium-step.int.test.ts).
    args: [...fakeDriverAgentArgs("25130-25229", { allowLocalApps }), ...extraArgs],
    env: { ...labEnv, APPIUM_HOME: fake.home },
    running,
  });
}

const execution = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
const finished = (id: string) =>
  waitFor(`execution ${id} to end`, async () => {
    const view = await execution(id);
    return !["queued", "running"].includes(view.status) && view;
  });

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      // Heartbeats every 2 s, which is how the agent hears of a cancel.
      TESTBAY_LEASE_TTL_SECONDS: "6",
    },
  });
  scratch = await mkdtemp(path.join(tmpdir(), "testbay-agent-appium-"));
  ciCredentials = await server.createClient("acme", "ci");
  ci = { "x-api-key": await server.token(ciCredentials) };
  agentCredentials = await server.createClient("acme", "agent");
  await registerBasicApp(server, ci, "1.0.0");
  fake = await installFakeDriver();
  lab = await createDeviceLab({
    devices: [{ serial: SERIAL, model: "Pixel 7", release: "14", sdk: 34 }],
    timeScale: 0.05,
  });
});

afterEach(() => stopAgentProcesses(running));

afterAll(async () => {
  await server?.close();
  lab?.cleanup();
  await fake?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The fake driver's capabilities, on the lab's Android device (testbay:options.platform). */
const fakeOnAndroid = (options: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  ({
    platformName: "Fake",
    "appium:automationName": "Fake",
    "appium:app": FAKE_APP,
    "testbay:options": { platform: "android", name: "fake shop", queue_timeout_seconds: 120, ...options },
    ...extra,
  }) as WebdriverIO.Capabilities;

/** A webdriverio session at Testbay's `/wd/hub` with the ci client's ID and secret (HTTP Basic). */
function newSession(agent: AgentProcess, capabilities = fakeOnAndroid()) {
  const { port } = new URL(server.origin);
  return remote({
    hostname: "127.0.0.1",
    port: Number(port),
    path: "/wd/hub",
    protocol: "http",
    user: ciCredentials.client_id,
    key: ciCredentials.client_secret,
    logLevel: "silent",
    connectionRetryCount: 0,
    connectionRetryTimeout: 180_000,
    capabilities,
  }).catch((error: Error) => {
    throw new Error(`${error.message}\nagent said:\n${agent.output()}`);
  });
}

describe("testbay-agent --appium with a webdriverio client", () => {
  it("creates the session on the lab's device, relays its commands, and ends it passed on DELETE with its logs", async () => {
    const agent = startAgent("appium-rack");
    const browser = await newSession(agent);
    const id = browser.sessionId;
    expect(browser.capabilities).toMatchObject({ "testbay:execution_id": id });

    // Through the relay to the agent's Appium: the fake app's page source, and an element found in it.
    const source = await browser.getPageSource();
    expect(source).toContain("Espresso beans");
    const button = browser.$("//MockButton[@id='add-to-cart']");
    await button.click();
    await button.click();
    expect(await button.getAttribute("clicks")).toBe("2");

    const running = await execution(id);
    expect(running).toMatchObject({
      kind: "session",
      status: "running",
      devices: [{ agent_id: "appium-rack", device: { platform: "android" } }],
    });

    await browser.deleteSession();
    const done = await finished(id);
    expect(done).toMatchObject({ kind: "session", status: "passed" });

    const artifacts = await call(`${server.baseUrl}/executions/${id}/artifacts`, { headers: ci });
    const names = artifacts.body.items.map((a: { name: string }) => a.name);
    expect(names).toEqual(expect.arrayContaining(["appium.log", "commands.jsonl"]));
    // The device log followed while the session ran, as for any device step.
    expect(names).toEqual(expect.arrayContaining([`device-${SERIAL}/logcat.txt`]));
    // And its video (record_video is true unless the client says not).
    expect(names.filter((name: string) => name.startsWith(`device-${SERIAL}/video/`))).not.toEqual([]);

    const commands = await (
      await fetch(`${server.baseUrl}/executions/${id}/artifacts/commands.jsonl`, { headers: ci })
    ).text();
    const lines = commands
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { method: string; path: string; status: number });
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: "GET", path: "/source", status: 200 }),
        expect.objectContaining({ method: "DELETE", path: "", status: 200 }),
      ]),
    );
    const appiumLog = await (
      await fetch(`${server.baseUrl}/executions/${id}/artifacts/appium.log`, { headers: ci })
    ).text();
    expect(appiumLog).toContain("Fake");

    // The session is over: the next command is told so.
    const after = await fetch(`${server.origin}/wd/hub/session/${id}/source`, { headers: ci });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { value: { error: string } }).value.error).toBe("invalid session id");
  });

  it("gives a shell step on the device an Appium of its own: TESTBAY_APPIUM_URL and TESTBAY_APPIUM_CAPABILITIES", async () => {
    const agent = startAgent("appium-shell", ["--allow-shell"]);
    const script = [
      // The Appium started for the step answers ready at the URL given.
      `"${process.execPath}" -e 'fetch(process.env.TESTBAY_APPIUM_URL + "/status").then((r) => r.json()).then((j) => console.log("appium ready " + j.value.ready))'`,
      'echo "capabilities $TESTBAY_APPIUM_CAPABILITIES"',
    ].join("\n");
    const plan = await call(`${server.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "shell with appium",
        package_name: "com.example.basic",
        devices: [{ platform: "android", model: "Pixel 7" }],
        steps: [{ type: "shell", name: "suite", run: script }],
      },
    });
    expect(plan.status).toBe(201);
    const triggered = await call(`${server.baseUrl}/testplan/run`, {
      headers: ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.0.0" },
    });
    expect(triggered.status).toBe(200);
    const id = triggered.body.execution.id as string;
    const view = await finished(id);
    const log = (await call(`${server.baseUrl}/executions/${id}/log`, { headers: ci })).body as string;
    expect(view.status, `${log}\nagent said:\n${agent.output()}`).toBe("passed");
    expect(log).toContain("appium ready true");
    const line = log.split("\n").find((l) => l.includes("capabilities {"));
    const capabilities = JSON.parse(line?.slice(line.indexOf("{")) ?? "null");
    expect(capabilities).toMatchObject({
      platformName: "Android",
      "appium:udid": SERIAL,
      "appium:systemPort": expect.any(Number),
      "appium:mjpegServerPort": expect.any(Number),
      "appium:chromedriverPort": expect.any(Number),
    });
    // The fake driver takes no Android device: no automationName is made up.
    expect(capabilities).not.toHaveProperty("appium:automationName");
    const artifacts = await call(`${server.baseUrl}/executions/${id}/artifacts`, { headers: ci });
    expect(artifacts.body.items.map((a: { name: string }) => a.name)).toContain("appium-step-1.log");
  });

  it("ends the session when its device is lost: the next command is told so, and the run is errored device_lost", async () => {
    const agent = startAgent("appium-lost");
    const browser = await newSession(agent);
    const id = browser.sessionId;
    expect(await browser.getPageSource()).toContain("Espresso beans");
    lab.unplug(SERIAL);
    try {
      const done = await finished(id);
      expect(done.status).toBe("errored");
      await waitFor("the agent to say why", async () =>
        agent.output().includes(`${id} ended errored (device_lost)`),
      );
      await expect(browser.getPageSource()).rejects.toThrow(/device_lost|device was lost/);
    } finally {
      lab.plug({ serial: SERIAL, model: "Pixel 7", release: "14", sdk: 34 });
    }
  });

  it("installs a session's registered version on the device before Appium starts and passes its file as appium:app", async () => {
    const agent = startAgent("appium-install");
    // The fake driver reads its app as XML: an APK is refused, after the install and with its path in Appium's log.
    const refused = await newSession(
      agent,
      fakeOnAndroid({ app: "com.example.basic", version: "1.0.0" }, { "appium:app": undefined }),
    ).then(
      () => null,
      (error: Error) => error,
    );
    // The fake driver's own words for an app that is no XML, passed on to the client.
    expect(refused?.message).toMatch(/missing root element/);
    // Installed (read from the log of installs: the agent uninstalls it from this plugged-in device after the run).
    expect(lab.installLog()).toContainEqual(
      expect.objectContaining({ serial: SERIAL, package: "com.example.basic" }),
    );
    const id = await waitFor("the session's execution", async () => {
      const items = (await call(`${server.baseUrl}/executions`, { headers: ci })).body.items as {
        id: string;
        kind: string;
        package_name: string | null;
        status: string;
      }[];
      // The one session of this file that names a registered app.
      return items.find(
        (e) => e.kind === "session" && e.package_name === "com.example.basic" && e.status === "errored",
      )?.id;
    });
    const appiumLog = await (
      await fetch(`${server.baseUrl}/executions/${id}/artifacts/appium.log`, { headers: ci })
    ).text();
    expect(appiumLog).toMatch(/com\.example\.basic\.apk/);
  });

  it("on SIGTERM ends its session after the grace, stops its Appium, and exits 0", async () => {
    const agent = startAgent("appium-stop", ["--shutdown-grace", "1"]);
    const browser = await newSession(agent);
    const id = browser.sessionId;
    expect(await browser.getPageSource()).toContain("Espresso beans");
    // The session's Appium listens on the first block of the agent's range.
    expect(await isPortFree(25130)).toBe(false);
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(await isPortFree(25130)).toBe(true);
    const done = await finished(id);
    expect(done.status).toBe("errored");
    expect(agent.output()).toContain(`${id} ended errored (agent_stopped)`);
    await expect(browser.getPageSource()).rejects.toThrow(/agent_stopped|agent holding its device stopped/);
  });

  it("refuses a local appium:app path without --appium-allow-local-apps, saying so to the client", async () => {
    const agent = startAgent("appium-strict", [], false);
    const refused = await newSession(agent).then(
      () => null,
      (error: Error) => error,
    );
    expect(refused?.message).toContain("--appium-allow-local-apps");
  });

  it("ends a cancelled session before the cancel is answered: the client's next command is told, the run ends cancelled", async () => {
    const agent = startAgent("appium-cancel");
    const browser = await newSession(agent);
    const id = browser.sessionId;
    // The server now knows the session's route (session-directory.ts keeps it a second): the cancel itself must
    // reach the agent, not wait for its next heartbeat.
    expect(await browser.getPageSource()).toContain("Espresso beans");
    const cancel = await call(`${server.baseUrl}/executions/${id}/cancel`, { method: "POST", headers: ci });
    expect(cancel.body.cancel_requested).toBe(true);
    await expect(browser.getPageSource()).rejects.toThrow(/cancelled/);
    const done = await finished(id);
    expect(done.status).toBe("cancelled");
    await waitFor("the agent to say so", async () => agent.output().includes(`${id} ended cancelled`));
  });

  it("holds a session on an iOS simulator (testbay:options.platform ios), with its device log and video", async () => {
    const UDID = "5C0FFEE0-0000-4000-8000-000000000015";
    const apple = await createAppleLab({
      simulators: [
        {
          udid: UDID,
          name: "iPhone 15",
          runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5",
          state: "Booted",
        },
      ],
      timeScale: 0.05,
    });
    try {
      // The Android lab's adb beside Xcode's tools, as on a Mac with both.
      const agent = startAgent("appium-mac", [], true, { ...lab.env, ...apple.env });
      const browser = await newSession(agent, fakeOnAndroid({ platform: "ios" }));
      const id = browser.sessionId;
      expect(await browser.getPageSource()).toContain("Espresso beans");
      await browser.deleteSession();
      const done = await finished(id);
      expect(done.status, agent.output()).toBe("passed");
      const artifacts = await call(`${server.baseUrl}/executions/${id}/artifacts`, { headers: ci });
      const names = artifacts.body.items.map((a: { name: string }) => a.name);
      expect(names).toEqual(
        expect.arrayContaining([
          "appium.log",
          "commands.jsonl",
          `device-${UDID}/device-log.txt`,
          `device-${UDID}/video/part-01.mp4`,
        ]),
      );
      const appiumLog = await (
        await fetch(`${server.baseUrl}/executions/${id}/artifacts/appium.log`, { headers: ci })
      ).text();
      // XCUITest's port capabilities for an iOS device, and its UDID.
      expect(appiumLog).toContain(UDID);
      expect(appiumLog).toContain("wdaLocalPort");
    } finally {
      apple.cleanup();
    }
  });

  it("ends a session idle for idle_timeout_seconds: errored, the client's next command told, no video when record_video is false", async () => {
    const agent = startAgent("appium-idle");
    const browser = await newSession(agent, fakeOnAndroid({ idle_timeout_seconds: 1, record_video: false }));
    const id = browser.sessionId;
    // No command after the session's creation: the agent ends it after a second and says so on its channel.
    const done = await finished(id);
    expect(done.status).toBe("errored");
    await waitFor("the agent to say why", async () =>
      agent.output().includes(`${id} ended errored (idle_timeout)`),
    );
    await expect(browser.getPageSource()).rejects.toThrow(/idle_timeout|idle timeout/);
    const artifacts = await call(`${server.baseUrl}/executions/${id}/artifacts`, { headers: ci });
    const names: string[] = artifacts.body.items.map((a: { name: string }) => a.name);
    expect(names).toEqual(
      expect.arrayContaining(["appium.log", "commands.jsonl", `device-${SERIAL}/logcat.txt`]),
    );
    expect(names.filter((name) => name.includes("/video/"))).toEqual([]);
  });
});
