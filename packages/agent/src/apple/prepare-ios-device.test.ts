// Readying an iOS device for a step, on the xcrun stand-ins: the app from its archive goes on the booted
// simulator, data is cleared by uninstalling it first, and maestro refuses a physical device.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildAppArchive, createAppleLab } from "../../test/stand-ins/apple-lab.ts";
import { makeStepContext } from "../steps/test-context.ts";
import { prepareIosDevice, prepareIosForMaestro } from "./prepare-ios-device.ts";
import { XcodeTools } from "./xcrun.ts";

const SIM = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01";
const PHONE = {
  identifier: "0D6F1F7C-7F6B-4D6E-9D5B-3B2C1A0F9E11",
  udid: "00008110-001A2B3C4D5E6F70",
  name: "Ann's",
};
const APP = { bundleId: "com.example.shop", name: "Shop" };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setUp(serial: string) {
  const lab = await createAppleLab({
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
  cleanups.push(() => lab.cleanup());
  const files = await mkdtemp(join(tmpdir(), "testbay-prepare-ios-"));
  cleanups.push(() => rm(files, { recursive: true, force: true }));
  const ipa = buildAppArchive(files, APP, "ipa");
  const ctx = await makeStepContext({
    device: { serial, platform: "ios", model: "iPhone 15", os_version: "17.5" },
    binary: {
      format: "ipa",
      platform: "ios",
      package_name: APP.bundleId,
      version_name: "1.0",
      version_code: "1",
      min_sdk: null,
      target_sdk: null,
      min_os_version: "16.0",
      abis: [],
      permissions: [],
      debuggable: false,
      display_name: "Shop",
    },
    packageName: APP.bundleId,
    appPath: async () => ipa,
  });
  cleanups.push(() => ctx.cleanup());
  // The maestro path builds its own tools from the agent's environment: the lab's goes there.
  for (const [key, value] of Object.entries(lab.env)) vi.stubEnv(key, value);
  const tools = new XcodeTools({ workDir: ctx.workDir, signal: ctx.signal, log: ctx.log });
  return { lab, ctx, tools };
}

describe("prepareIosDevice", () => {
  it("uninstalls an installed app to clear its data, then installs the app from the IPA", async () => {
    const { lab, ctx, tools } = await setUp(SIM);
    lab.preinstall(SIM, { bundleId: APP.bundleId, name: "Shop", version: "0.9" });
    const prepared = await prepareIosDevice(ctx, tools, { clearPackageData: true, what: "xcuitest" });
    expect("device" in prepared && prepared.device.kind).toBe("simulator");
    const steps = lab.calls().map((c) => c.argv.slice(0, 2).join(" "));
    expect(steps.indexOf("simctl uninstall")).toBeGreaterThan(-1);
    expect(steps.indexOf("simctl uninstall")).toBeLessThan(steps.indexOf("simctl install"));
    expect(lab.installed(SIM)[APP.bundleId]).toMatchObject({
      version: "1.0",
      installs: 1,
      installedBy: "simctl",
    });
  });

  it("hands the run back when the device is not there", async () => {
    const { ctx, tools } = await setUp("6F1C0E6A-0000-0000-0000-000000000000");
    expect(await prepareIosDevice(ctx, tools, { clearPackageData: false, what: "xcuitest" })).toEqual({
      outcome: {
        status: "errored",
        message:
          "device 6F1C0E6A-0000-0000-0000-000000000000 was lost: neither simctl nor devicectl lists it",
        deviceLost: true,
      },
    });
  });
});

describe("prepareIosForMaestro", () => {
  it("installs the app on the simulator before the flows run", async () => {
    const { lab, ctx } = await setUp(SIM);
    expect(await prepareIosForMaestro(ctx, false)).toBeNull();
    expect(lab.installed(SIM)[APP.bundleId]).toMatchObject({ installedBy: "simctl" });
  });

  it("refuses a physical device: maestro drives simulators only", async () => {
    const { ctx } = await setUp(PHONE.udid);
    expect(await prepareIosForMaestro(ctx, false)).toEqual({
      status: "errored",
      message: "maestro runs iOS flows on simulators only",
    });
  });
});
