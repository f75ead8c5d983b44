// After a run on an iOS device the agent does not manage, what the run installed goes (API.md §13): on the
// xcrun stand-ins, a plugged-in iPhone through devicectl and a simulator through simctl; what the run did not
// install stays, and a bundle that is already gone is not an error.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentJob } from "@testbay/client";
import { afterEach, describe, expect, it } from "vitest";
import { createAppleLab } from "../../test/stand-ins/apple-lab.ts";
import { BinaryCache } from "./binary-cache.ts";
import { runBundleIds, uninstallAfterRun } from "./uninstall-after-run.ts";

const SIM = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01";
const PHONE = {
  identifier: "0D6F1F7C-7F6B-4D6E-9D5B-3B2C1A0F9E11",
  udid: "00008110-001A2B3C4D5E6F70",
  name: "Ann's",
};
const APP = "com.example.shop";
const RUNNER = `${APP}.ShopUITests.xctrunner`;

/** The part of a job the cleanup reads: the app, and an XCUITest package with a UI and a unit test target. */
const job = {
  package_name: APP,
  test_package: {
    format: "xctest",
    test: {
      xctestrun: "Shop.xctestrun",
      test_targets: [
        { name: "ShopUITests", bundle_id: RUNNER, ui_target_app: APP },
        { name: "ShopTests", bundle_id: APP, ui_target_app: null },
      ],
    },
  },
} as unknown as AgentJob;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function lab() {
  const made = await createAppleLab({
    timeScale: 0.02,
    simulators: [
      {
        udid: SIM,
        name: "iPhone 15",
        runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5",
        state: "Booted",
      },
    ],
    devices: [PHONE],
  });
  cleanups.push(() => made.cleanup());
  const scratchDir = await mkdtemp(join(tmpdir(), "testbay-uninstall-"));
  cleanups.push(() => rm(scratchDir, { recursive: true, force: true }));
  const lines: string[] = [];
  const options = {
    env: { ...process.env, ...made.env },
    log: (line: string) => lines.push(line),
    scratchDir,
    cache: new BinaryCache(join(scratchDir, "cache")),
  };
  return { lab: made, options, lines };
}

describe("uninstallAfterRun on iOS (stand-ins)", () => {
  it("names the app once and each UI test target's runner", () => {
    expect(runBundleIds(job)).toEqual([APP, RUNNER]);
  });

  // The agent knows a phone by its UDID; the stand-in keeps its state under CoreDevice's identifier.
  for (const [kind, udid, stateId, tool] of [
    ["a plugged-in iPhone", PHONE.udid, PHONE.identifier, "devicectl"],
    ["a simulator", SIM, SIM, "simctl"],
  ] as const) {
    it(`removes the app and the runner from ${kind} with ${tool}, and leaves the device's own apps`, async () => {
      const { lab: l, options, lines } = await lab();
      for (const bundleId of [APP, RUNNER, "com.apple.mobilesafari"]) {
        l.preinstall(stateId, { bundleId, name: bundleId });
      }
      await uninstallAfterRun(job, { serial: udid, platform: "ios" }, options);
      expect(Object.keys(l.installed(stateId))).toEqual(["com.apple.mobilesafari"]);
      expect(l.calls().filter((c) => c.argv.includes("uninstall")).length).toBe(2);
      expect(lines).toEqual([]);
    });
  }

  it("says nothing when the run never installed them (it failed before)", async () => {
    const { lab: l, options, lines } = await lab();
    await uninstallAfterRun(job, { serial: PHONE.udid, platform: "ios" }, options);
    await uninstallAfterRun(job, { serial: SIM, platform: "ios" }, options);
    expect(Object.keys(l.installed(PHONE.identifier))).toEqual([]);
    expect(lines).toEqual([]);
  });

  it("logs a device that is gone instead of failing", async () => {
    const { options, lines } = await lab();
    await uninstallAfterRun(job, { serial: "00008110-0000000000000000", platform: "ios" }, options);
    expect(lines).toEqual([
      "device 00008110-0000000000000000: not listed by simctl or devicectl after the run; nothing uninstalled",
    ]);
  });
});
