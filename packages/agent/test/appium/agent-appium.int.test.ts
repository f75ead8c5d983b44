/**
 * An Appium session end to end through Testbay (API.md §12; docs/appium-relay.md), on SQLite and on the scaled set,
 * where the client's commands reach either instance while the agent's channel is held by one of them: a real
 * `testbay-agent --appium` with Appium's fake driver on the stand-in lab's device and a real `webdriverio` client
 * (appium-agent-site.ts). What crosses the relay: the session's commands and its end, its artifacts, a registered
 * version installed from the store, a lost device and a cancel told to the client. What the agent does on its
 * host alone is agent-appium-host.int.test.ts's, on SQLite only.
 */
import { describe, expect, it } from "vitest";
import { call } from "../../../server/test/harness.ts";
import { waitFor } from "../agent-process.ts";
import { fakeOnAndroid, PIXEL, SERIAL, useAppiumAgentSite } from "./appium-agent-site.ts";

// Apart from the other Appium suites' ranges (agent-appium-host, appium-fleet, appium-session, appium-step).
const site = useAppiumAgentSite("25130-25229");

describe("testbay-agent --appium with a webdriverio client, through the relay", () => {
  it("creates the session on the lab's device, relays its commands, and ends it passed on DELETE with its logs", async () => {
    const agent = site.startAgent("appium-rack");
    const browser = await site.newSession(agent);
    const id = browser.sessionId;
    expect(browser.capabilities).toMatchObject({ "testbay:execution_id": id });

    // Through the relay to the agent's Appium: the fake app's page source, and an element found in it.
    const source = await browser.getPageSource();
    expect(source).toContain("Espresso beans");
    const button = browser.$("//MockButton[@id='add-to-cart']");
    await button.click();
    await button.click();
    expect(await button.getAttribute("clicks")).toBe("2");

    const running = await site.execution(id);
    expect(running).toMatchObject({
      kind: "session",
      status: "running",
      devices: [{ agent_id: "appium-rack", device: { platform: "android" } }],
    });

    await browser.deleteSession();
    const done = await site.finished(id);
    expect(done).toMatchObject({ kind: "session", status: "passed" });

    const artifacts = await call(`${site.server.baseUrl}/executions/${id}/artifacts`, { headers: site.ci });
    const names = artifacts.body.items.map((a: { name: string }) => a.name);
    expect(names).toEqual(expect.arrayContaining(["appium.log", "commands.jsonl"]));
    // The device log followed while the session ran, as for any device step.
    expect(names).toEqual(expect.arrayContaining([`device-${SERIAL}/logcat.txt`]));
    // And its video (record_video is true unless the client says not).
    expect(names.filter((name: string) => name.startsWith(`device-${SERIAL}/video/`))).not.toEqual([]);

    const commands = await site.artifactText(id, "commands.jsonl");
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
    const appiumLog = await site.artifactText(id, "appium.log");
    expect(appiumLog).toContain("Fake");

    // The session is over: the next command is told so.
    const after = await fetch(`${site.server.origin}/wd/hub/session/${id}/source`, { headers: site.ci });
    expect(after.status).toBe(404);
    expect(((await after.json()) as { value: { error: string } }).value.error).toBe("invalid session id");
  });

  it("ends the session when its device is lost: the next command is told so, and the run is errored device_lost", async () => {
    const agent = site.startAgent("appium-lost");
    const browser = await site.newSession(agent);
    const id = browser.sessionId;
    expect(await browser.getPageSource()).toContain("Espresso beans");
    site.lab.unplug(SERIAL);
    try {
      const done = await site.finished(id);
      expect(done.status).toBe("errored");
      await waitFor("the agent to say why", async () =>
        agent.output().includes(`${id} ended errored (device_lost)`),
      );
      await expect(browser.getPageSource()).rejects.toThrow(/device_lost|device was lost/);
    } finally {
      site.lab.plug(PIXEL);
    }
  });

  it("installs a session's registered version on the device before Appium starts and passes its file as appium:app", async () => {
    const agent = site.startAgent("appium-install");
    // The fake driver reads its app as XML: an APK is refused, after the install and with its path in Appium's log.
    const refused = await site
      .newSession(
        agent,
        fakeOnAndroid({ app: "com.example.basic", version: "1.0.0" }, { "appium:app": undefined }),
      )
      .then(
        () => null,
        (error: Error) => error,
      );
    // The fake driver's own words for an app that is no XML, passed on to the client.
    expect(refused?.message).toMatch(/missing root element/);
    // Installed (read from the log of installs: the agent uninstalls it from this plugged-in device after the run).
    expect(site.lab.installLog()).toContainEqual(
      expect.objectContaining({ serial: SERIAL, package: "com.example.basic" }),
    );
    const id = await waitFor("the session's execution", async () => {
      const items = (await call(`${site.server.baseUrl}/executions`, { headers: site.ci })).body.items as {
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
    const appiumLog = await site.artifactText(id, "appium.log");
    expect(appiumLog).toMatch(/com\.example\.basic\.apk/);
  });

  it("ends a cancelled session before the cancel is answered: the client's next command is told, the run ends cancelled", async () => {
    const agent = site.startAgent("appium-cancel");
    const browser = await site.newSession(agent);
    const id = browser.sessionId;
    // The server now knows the session's route (session-directory.ts keeps it a second): the cancel itself must
    // reach the agent, not wait for its next heartbeat.
    expect(await browser.getPageSource()).toContain("Espresso beans");
    const cancel = await call(`${site.server.baseUrl}/executions/${id}/cancel`, {
      method: "POST",
      headers: site.ci,
    });
    expect(cancel.body.cancel_requested).toBe(true);
    await expect(browser.getPageSource()).rejects.toThrow(/cancelled/);
    const done = await site.finished(id);
    expect(done.status).toBe("cancelled");
    await waitFor("the agent to say so", async () => agent.output().includes(`${id} ended cancelled`));
  });
});
