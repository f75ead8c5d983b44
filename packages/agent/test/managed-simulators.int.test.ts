import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { waitFor } from "./agent-process.ts";
import { IOS_APP as APP, iosServer } from "./ios-server.ts";
import { buildAppArchive, buildTestPackageZip } from "./stand-ins/apple-lab.ts";

// Managed simulators end to end (issue 28, API.md §13): a real server, a real `testbay-agent --simulator` process
// and the simctl stand-in (stand-ins/xc-simctl.mjs), which creates, boots, erases and shuts down simulators as
// simctl does. What each simulator held when a run began is read from the lab (lab.installs).

const TARGET = "ShopUITests";
const IOS_17_4 = "com.apple.CoreSimulator.SimRuntime.iOS-17-4";
/** The operator's own simulator, booted, which the agent must leave alone. */
const OPERATORS = "0F0E0D0C-0B0A-4909-8807-060504030201";

const ios = iosServer((scratch) => {
  const app = { bundleId: APP, name: "Shop" };
  return {
    app: buildAppArchive(scratch, app, "ipa"),
    testPackage: buildTestPackageZip(scratch, { app, targets: [{ name: TARGET, ui: true }] }),
  };
});

interface ListedDevice {
  serial: string;
  model: string;
  os_version: string;
  managed?: boolean;
  emulator?: boolean;
  pool?: string | null;
  state: string;
  error?: string | null;
  boot_ms?: number | null;
}

async function devicesOf(agent: string): Promise<ListedDevice[]> {
  const agents = await call(`${ios.server.baseUrl}/agents`, { headers: ios.ci });
  return (
    (agents.body.items as Array<{ name: string; devices: ListedDevice[] }>).find((a) => a.name === agent)
      ?.devices ?? []
  );
}

describe("managed simulators (stand-in)", () => {
  it('--simulator "iPhone 15@17.4=2" creates and boots two simulators, starts every run on a clean one, fails one that never boots after three restarts, and SIGTERM shuts down only its own', async () => {
    const lab = await ios.createLab({
      simulators: [
        {
          udid: OPERATORS,
          name: "My iPhone 16 Pro",
          runtime: "com.apple.CoreSimulator.SimRuntime.iOS-18-0",
          deviceTypeIdentifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-16-Pro",
          state: "Booted",
        },
      ],
      suites: { [TARGET]: { tests: [{ class: "LoginTests", method: "testSignsIn", outcome: "pass" }] } },
    });
    // The one simulator of the second pool never boots: launchd_sim does not come up, every time.
    lab.onCreate("testbay iPhone SE (3rd generation) 17.4 #1", { bootFailures: -1 });
    const agent = ios.startAgent("mac-sims", [
      "--simulator",
      "iPhone 15@17.4=2",
      "--simulator",
      "iPhone SE (3rd generation)@17.4",
      "--concurrency",
      "2",
    ]);

    const offered = await waitFor(
      "two idle simulators and a failed one",
      async () => {
        const devices = (await devicesOf("mac-sims")).filter((d) => d.managed);
        const idle = devices.filter((d) => d.pool === "iPhone 15@17.4" && d.state === "idle");
        const failed = devices.find(
          (d) => d.pool === "iPhone SE (3rd generation)@17.4" && d.state === "failed",
        );
        return idle.length === 2 && failed && { idle, failed };
      },
      60_000,
    ).catch((error) => {
      console.log(agent.output());
      throw error;
    });

    // Created with Testbay's names under the runtime and device type asked for, and booted.
    const created = lab
      .simulators()
      .filter((s) => s.udid !== OPERATORS)
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(created.map((s) => [s.name, s.runtime, s.deviceTypeIdentifier, s.state])).toEqual([
      ["testbay iPhone 15 17.4 #1", IOS_17_4, "com.apple.CoreSimulator.SimDeviceType.iPhone-15", "Booted"],
      ["testbay iPhone 15 17.4 #2", IOS_17_4, "com.apple.CoreSimulator.SimDeviceType.iPhone-15", "Booted"],
      [
        "testbay iPhone SE (3rd generation) 17.4 #1",
        IOS_17_4,
        "com.apple.CoreSimulator.SimDeviceType.iPhone-SE-3rd-generation",
        "Shutdown",
      ],
    ]);
    const [iPhone1, iPhone2, se] = created as [(typeof created)[0], (typeof created)[0], (typeof created)[0]];
    expect(offered.idle.map((d) => d.serial).sort()).toEqual([iPhone1.udid, iPhone2.udid].sort());
    // Each booted one says how long its boot took (the Agents page shows it); the one that never booted, nothing.
    for (const device of offered.idle) expect(device.boot_ms).toBeGreaterThan(0);
    expect(offered.failed.boot_ms ?? null).toBeNull();
    for (const device of offered.idle) {
      expect(device).toMatchObject({ model: "iPhone 15", os_version: "17.4", managed: true, emulator: true });
    }
    // The first launch and three restarts, then failed with simctl's own lines.
    expect(se.failedBoots).toBe(4);
    expect(offered.failed).toMatchObject({ serial: se.udid, managed: true, emulator: true });
    expect(offered.failed.error).toContain("Unable to boot the Simulator.");
    expect(offered.failed.error).toContain("Failed to start launchd_sim");

    // Four device runs on the two simulators.
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await ios.trigger({ type: "xcuitest" }, { device: { platform: "ios", model: "iPhone 15" } }));
    }
    const views = [];
    for (const id of ids) views.push(await ios.finished(id, agent));
    for (const view of views)
      expect(view).toMatchObject({ status: "passed", summary: { tests: 1, passed: 1 } });
    const serials = views.map((v) => v.devices[0].claimed_device.serial as string);
    expect(new Set(serials).size).toBe(2);
    expect(serials.every((s) => [iPhone1.udid, iPhone2.udid].includes(s))).toBe(true);

    // Each run found nothing the run before it installed: its app install met an empty simulator, although the
    // runs left the app and xcodebuild's test runner behind (erased by the reset that followed).
    const installs = [iPhone1.udid, iPhone2.udid].flatMap((udid) => lab.installs(udid));
    expect(installs.filter((i) => i.bundleId === APP)).toHaveLength(4);
    expect(installs.map((i) => i.alreadyInstalled)).toEqual([[], [], [], []]);
    // The resets: one erase at the clean start, then one after each run.
    await waitFor("both simulators idle again", async () => {
      const devices = await devicesOf("mac-sims");
      return devices.filter((d) => d.pool === "iPhone 15@17.4" && d.state === "idle").length === 2;
    });
    const erases = lab
      .simulators()
      .filter((s) => s.udid === iPhone1.udid || s.udid === iPhone2.udid)
      .reduce((n, s) => n + (s.erased ?? 0), 0);
    expect(erases).toBe(2 + 4);
    // The reset before a run is on it: each run that followed another on its simulator says what that cost; the
    // first run on each came after the clean start, which is no run's.
    const setups = views.map((v) => v.devices[0].setup_ms as number | null);
    expect(setups.filter((ms) => ms !== null && ms >= 0)).toHaveLength(4 - 2);
    for (const view of views) {
      expect(view.devices[0].claimed_device).toMatchObject({
        managed: true,
        emulator: true,
        pool: "iPhone 15@17.4",
      });
    }

    agent.child.kill("SIGTERM");
    expect(await agent.exited).toBe(0);
    const after = Object.fromEntries(lab.simulators().map((s) => [s.udid, s.state]));
    expect(after).toEqual({
      [OPERATORS]: "Booted",
      [iPhone1.udid]: "Shutdown",
      [iPhone2.udid]: "Shutdown",
      [se.udid]: "Shutdown",
    });
    expect(lab.installed(iPhone1.udid)).toEqual({});
  });

  it("a simulator that crashes mid-run is booted clean again and its run re-queued, not failed", async () => {
    const lab = await ios.createLab({
      suites: {
        [TARGET]: {
          tests: [
            { class: "LoginTests", method: "testSignsIn", outcome: "pass" },
            { class: "LoginTests", method: "testSignsOut", outcome: "pass" },
          ],
        },
      },
    });
    const agent = ios.startAgent("mac-crash", ["--simulator", "iPhone 15@17.4"]);
    const [device] = await waitFor("an idle managed simulator", async () => {
      const idle = (await devicesOf("mac-crash")).filter((d) => d.managed && d.state === "idle");
      return idle.length === 1 && idle;
    });
    const udid = device?.serial as string;
    // Its first test takes the simulator down (Shutdown), as a crashing CoreSimulator does.
    lab.crash(udid);
    const id = await ios.trigger(
      { type: "xcuitest" },
      { device: { platform: "ios", model: "iPhone 15" }, max_attempts: 2 },
    );
    const view = await ios.finished(id, agent);
    expect(view).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 2 },
      devices: [{ attempt: 2, status: "passed", claimed_device: { serial: udid, managed: true } }],
    });
    expect(agent.output()).toMatch(/device_lost/);
    const sim = lab.simulators().find((s) => s.udid === udid);
    expect(sim).toMatchObject({ state: "Booted", crashes: 1 });
    // The second attempt began on a simulator erased after the crash: its install met an empty simulator.
    expect(lab.installs(udid).map((i) => i.alreadyInstalled)).toEqual([[], []]);
    await waitFor("the simulator idle again", async () =>
      (await devicesOf("mac-crash")).some((d) => d.serial === udid && d.state === "idle"),
    );
  });

  it("refuses to start when this Xcode has no such device type or runtime, naming what it has", async () => {
    await ios.createLab({});
    const agent = ios.startAgent("mac-typo", ["--simulator", "iPhone 15@17.9"]);
    expect(await agent.exited).toBe(2);
    expect(agent.output()).toContain(
      '--simulator "iPhone 15@17.9": no iOS 17.9 simulator runtime is installed (xcrun simctl list runtimes). Installed: iOS 17.4, iOS 17.5, iOS 18.0.',
    );
    const malformed = ios.startAgent("mac-form", ["--simulator", "iPhone 15"]);
    expect(await malformed.exited).toBe(2);
    expect(malformed.output()).toContain("expected DEVICE_TYPE@OS[=N]");
  });
});
