/**
 * What a `testbay-agent --appium` does on its device host (API.md §12; docs/appium-relay.md), with a real server,
 * Appium's fake driver on the stand-in lab's device and a real `webdriverio` client (appium-agent-site.ts): an
 * Appium of its own for a shell step, a session ended on SIGTERM, local apps refused, an iOS simulator, the idle
 * timeout. None of it depends on which server instance the client reaches, so it runs on SQLite only; what
 * crosses the relay is agent-appium.int.test.ts's, on the scaled set too.
 */
import { describe, expect, it } from "vitest";
import { call } from "../../../server/test/harness.ts";
import { isPortFree } from "../../src/appium/port-blocks.ts";
import { waitFor } from "../agent-process.ts";
import { createAppleLab } from "../stand-ins/apple-lab.ts";
import { fakeOnAndroid, SERIAL, useAppiumAgentSite } from "./appium-agent-site.ts";

// Apart from the other Appium suites' ranges (agent-appium, appium-fleet, appium-session, appium-step).
const FIRST_PORT = 25230;
const site = useAppiumAgentSite(`${FIRST_PORT}-25329`);

describe("testbay-agent --appium on its device host", () => {
  it("gives a shell step on the device an Appium of its own: TESTBAY_APPIUM_URL and TESTBAY_APPIUM_CAPABILITIES", async () => {
    const agent = site.startAgent("appium-shell", ["--allow-shell"]);
    const script = [
      // The Appium started for the step answers ready at the URL given.
      `"${process.execPath}" -e 'fetch(process.env.TESTBAY_APPIUM_URL + "/status").then((r) => r.json()).then((j) => console.log("appium ready " + j.value.ready))'`,
      'echo "capabilities $TESTBAY_APPIUM_CAPABILITIES"',
    ].join("\n");
    const plan = await call(`${site.server.baseUrl}/testplans`, {
      headers: site.ci,
      json: {
        name: "shell with appium",
        package_name: "com.example.basic",
        devices: [{ platform: "android", model: "Pixel 7" }],
        steps: [{ type: "shell", name: "suite", run: script }],
      },
    });
    expect(plan.status).toBe(201);
    const triggered = await call(`${site.server.baseUrl}/testplan/run`, {
      headers: site.ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.0.0" },
    });
    expect(triggered.status).toBe(200);
    const id = triggered.body.execution.id as string;
    const view = await site.finished(id);
    const log = (await call(`${site.server.baseUrl}/executions/${id}/log`, { headers: site.ci }))
      .body as string;
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
    const artifacts = await call(`${site.server.baseUrl}/executions/${id}/artifacts`, { headers: site.ci });
    expect(artifacts.body.items.map((a: { name: string }) => a.name)).toContain("appium-step-1.log");
  });

  it("on SIGTERM ends its session after the grace, stops its Appium, and exits 0", async () => {
    const agent = site.startAgent("appium-stop", ["--shutdown-grace", "1"]);
    const browser = await site.newSession(agent);
    const id = browser.sessionId;
    expect(await browser.getPageSource()).toContain("Espresso beans");
    // The session's Appium listens on the first block of the agent's range.
    expect(await isPortFree(FIRST_PORT)).toBe(false);
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    expect(await isPortFree(FIRST_PORT)).toBe(true);
    const done = await site.finished(id);
    expect(done.status).toBe("errored");
    expect(agent.output()).toContain(`${id} ended errored (agent_stopped)`);
    await expect(browser.getPageSource()).rejects.toThrow(/agent_stopped|agent holding its device stopped/);
  });

  it("refuses a local appium:app path without --appium-allow-local-apps, saying so to the client", async () => {
    const agent = site.startAgent("appium-strict", [], false);
    const refused = await site.newSession(agent).then(
      () => null,
      (error: Error) => error,
    );
    expect(refused?.message).toContain("--appium-allow-local-apps");
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
      const agent = site.startAgent("appium-mac", [], true, { ...site.lab.env, ...apple.env });
      const browser = await site.newSession(agent, fakeOnAndroid({ platform: "ios" }));
      const id = browser.sessionId;
      expect(await browser.getPageSource()).toContain("Espresso beans");
      await browser.deleteSession();
      const done = await site.finished(id);
      expect(done.status, agent.output()).toBe("passed");
      const artifacts = await call(`${site.server.baseUrl}/executions/${id}/artifacts`, { headers: site.ci });
      const names = artifacts.body.items.map((a: { name: string }) => a.name);
      expect(names).toEqual(
        expect.arrayContaining([
          "appium.log",
          "commands.jsonl",
          `device-${UDID}/device-log.txt`,
          `device-${UDID}/video/part-01.mp4`,
        ]),
      );
      const appiumLog = await site.artifactText(id, "appium.log");
      // XCUITest's port capabilities for an iOS device, and its UDID.
      expect(appiumLog).toContain(UDID);
      expect(appiumLog).toContain("wdaLocalPort");
    } finally {
      apple.cleanup();
    }
  });

  it("ends a session idle for idle_timeout_seconds: errored, the client's next command told, no video when record_video is false", async () => {
    const agent = site.startAgent("appium-idle");
    const browser = await site.newSession(
      agent,
      fakeOnAndroid({ idle_timeout_seconds: 1, record_video: false }),
    );
    const id = browser.sessionId;
    // No command after the session's creation: the agent ends it after a second and says so on its channel.
    const done = await site.finished(id);
    expect(done.status).toBe("errored");
    await waitFor("the agent to say why", async () =>
      agent.output().includes(`${id} ended errored (idle_timeout)`),
    );
    await expect(browser.getPageSource()).rejects.toThrow(/idle_timeout|idle timeout/);
    const artifacts = await call(`${site.server.baseUrl}/executions/${id}/artifacts`, { headers: site.ci });
    const names: string[] = artifacts.body.items.map((a: { name: string }) => a.name);
    expect(names).toEqual(
      expect.arrayContaining(["appium.log", "commands.jsonl", `device-${SERIAL}/logcat.txt`]),
    );
    expect(names.filter((name) => name.includes("/video/"))).toEqual([]);
  });
});
