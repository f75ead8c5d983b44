// iOS simulators and devices found through xcrun next to adb's Android devices (devices/discover-devices.ts),
// on the stateful stand-ins: what the agent offers in its claims.
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AppleLab, createAppleLab, STAND_INS_BIN } from "../../test/stand-ins/apple-lab.ts";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import {
  describeDevice,
  discoverDevices,
  listReadyDevices,
  type PlatformListing,
} from "../devices/discover-devices.ts";

const listed = (said: PlatformListing) => (said.outcome === "listed" ? said.entries : []);

const labs: Array<AppleLab | DeviceLab> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const lab of labs.splice(0)) lab.cleanup();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function labsWith(android: NonNullable<Parameters<typeof createDeviceLab>[0]>["devices"]) {
  const apple = await createAppleLab({
    simulators: [
      {
        udid: "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01",
        name: "iPhone 15",
        runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5",
      },
      {
        udid: "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B02",
        name: "iPhone SE (3rd generation)",
        runtime: "com.apple.CoreSimulator.SimRuntime.iOS-16-4",
        deviceTypeIdentifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-SE-3rd-generation",
        state: "Booted",
      },
      {
        udid: "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B03",
        name: "iPhone 8",
        runtime: "com.apple.CoreSimulator.SimRuntime.iOS-12-4",
        isAvailable: false,
      },
    ],
    devices: [
      {
        identifier: "0D6F1F7C-7F6B-4D6E-9D5B-3B2C1A0F9E11",
        udid: "00008110-001A2B3C4D5E6F70",
        name: "Ann's iPhone",
        model: "iPhone 15 Pro",
        osVersion: "17.4",
      },
      {
        identifier: "0D6F1F7C-7F6B-4D6E-9D5B-3B2C1A0F9E12",
        udid: "00008110-001A2B3C4D5E6F71",
        name: "Unplugged",
        connected: false,
      },
    ],
  });
  const adb = await createDeviceLab({ devices: android });
  labs.push(apple, adb);
  return { ...adb.env, ...apple.env, PATH: apple.env.PATH as string };
}

describe("iOS device discovery", () => {
  it("lists available simulators and reachable paired devices next to the Android devices", async () => {
    const env = await labsWith([{ serial: "emulator-5554", model: "sdk_gphone64_x86_64", release: "14" }]);
    const found = await discoverDevices({ env });
    expect(found.unlisted).toEqual([]);
    expect(
      found.devices.map(({ serial, platform, model, os_version }) => ({
        serial,
        platform,
        model,
        os_version,
      })),
    ).toEqual([
      { serial: "emulator-5554", platform: "android", model: "sdk_gphone64_x86_64", os_version: "14" },
      { serial: "00008110-001A2B3C4D5E6F70", platform: "ios", model: "iPhone 15 Pro", os_version: "17.4" },
      {
        serial: "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01",
        platform: "ios",
        model: "iPhone 15",
        os_version: "17.5",
      },
      {
        serial: "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B02",
        platform: "ios",
        model: "iPhone SE (3rd generation)",
        os_version: "16.4",
      },
    ]);
  });

  it("describes an iOS entry without asking adb", async () => {
    const env = await labsWith([]);
    const listing = await listReadyDevices({ env });
    const entry = listed(listing.ios).find((e) => e.serial === "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01");
    if (!entry) throw new Error("the simulator is not listed");
    expect(await describeDevice(entry, { env: { PATH: "/nonexistent" } })).toMatchObject({
      platform: "ios",
      model: "iPhone 15",
      modelFrom: "xcrun",
      transportId: null,
    });
  });

  it("lists iOS devices on a Mac without adb, and says why there are none without either tool", async () => {
    const env = await labsWith([]);
    // A PATH with xcrun and no adb.
    const bin = await mkdtemp(join(tmpdir(), "testbay-xcrun-only-"));
    dirs.push(bin);
    await symlink(join(STAND_INS_BIN, "xcrun"), join(bin, "xcrun"));
    const withoutAdb = await listReadyDevices({ env: { ...env, PATH: `${bin}:${process.env.PATH}` } });
    expect(withoutAdb.android).toEqual({ outcome: "no-tool", reason: "adb is not on PATH" });
    expect(listed(withoutAdb.ios).map((e) => e.serial)).toEqual([
      "00008110-001A2B3C4D5E6F70",
      "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01",
      "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B02",
    ]);
    expect(await listReadyDevices({ env: { PATH: "/nonexistent" } })).toEqual({
      android: { outcome: "no-tool", reason: "adb is not on PATH" },
      ios: { outcome: "no-tool", reason: "xcrun is not on PATH" },
    });
  });
});
