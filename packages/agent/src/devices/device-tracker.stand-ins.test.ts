// The device tracker on the adb and xcrun stand-ins (both labs on one PATH, as on a Mac with Android devices and
// simulators): a tool that cannot list must not hide the other platform's devices, nor drop its own.
import { afterEach, describe, expect, it } from "vitest";
import { type AppleLab, createAppleLab } from "../../test/stand-ins/apple-lab.ts";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { DeviceTracker } from "./device-tracker.ts";
import { describeDevice, discoverDevices, type FoundDevice, listReadyDevices } from "./discover-devices.ts";

const SIMULATOR = "6F1C0E6A-1A8B-4C39-9D0B-2A7E1D0C5B01";
const PHONE = "00008110-001A2B3C4D5E6F70";
const NO_ADB_SERVER = "adb devices -l failed: adb: failed to check server version: cannot connect to daemon";
const NO_CORE_SIMULATOR =
  'xcrun simctl list devices failed: Unable to locate device set: Error Domain=NSPOSIXErrorDomain Code=61 "Connection refused"';

let android: DeviceLab;
let apple: AppleLab;
afterEach(() => {
  android?.cleanup();
  apple?.cleanup();
});

/** An emulator, a simulator and a paired iPhone; the env an agent on that Mac would have. */
async function mac() {
  android = await createDeviceLab({
    devices: [{ serial: "emulator-5554", model: "Pixel 7", release: "14" }],
  });
  apple = await createAppleLab({
    simulators: [
      { udid: SIMULATOR, name: "iPhone 15", runtime: "com.apple.CoreSimulator.SimRuntime.iOS-17-5" },
    ],
    devices: [
      {
        identifier: "0D6F1F7C-7F6B-4D6E-9D5B-3B2C1A0F9E11",
        udid: PHONE,
        name: "Ann's iPhone",
        model: "iPhone 15 Pro",
        osVersion: "17.4",
      },
    ],
  });
  const env = { ...android.env, ...apple.env, PATH: apple.env.PATH as string };
  const tracker = new DeviceTracker({
    list: () => listReadyDevices({ env }),
    describe: (entry) => describeDevice(entry, { env }),
  });
  return { env, tracker };
}

const serials = (devices: FoundDevice[]) => devices.map((d) => d.serial);

describe("listing devices platform by platform", () => {
  it("offers the simulators and the iPhone when adb cannot start its server, and names adb as the reason", async () => {
    const { env } = await mac();
    android.breakServer();
    const found = await discoverDevices({ env });
    expect(found.devices.map((d) => [d.serial, d.platform])).toEqual([
      [PHONE, "ios"],
      [SIMULATOR, "ios"],
    ]);
    expect(found.unlisted).toEqual([{ platform: "android", outcome: "failed", reason: NO_ADB_SERVER }]);
  });

  it("keeps the Android device adb found before it broke, and follows the iOS devices meanwhile", async () => {
    const { tracker } = await mac();
    expect(serials((await tracker.refresh()).added)).toEqual(["emulator-5554", PHONE, SIMULATOR]);
    android.breakServer();
    apple.disconnect("0D6F1F7C-7F6B-4D6E-9D5B-3B2C1A0F9E11");
    const change = await tracker.refresh();
    expect(change).toMatchObject({ added: [], unlisted: [{ platform: "android", reason: NO_ADB_SERVER }] });
    expect(serials(change.removed)).toEqual([PHONE]);
    expect(serials(tracker.devices())).toEqual(["emulator-5554", SIMULATOR]);
    // Kept, not read again: one getprop for the emulator in all.
    expect(android.calls().filter((c) => c.argv.includes("getprop"))).toHaveLength(1);
  });

  it("keeps the simulators while CoreSimulator is down, and follows the Android devices meanwhile", async () => {
    const { tracker } = await mac();
    await tracker.refresh();
    apple.breakCoreSimulator();
    android.plug({ serial: "emulator-5556", model: "Pixel 8 Pro", release: "15" });
    const change = await tracker.refresh();
    expect(serials(change.added)).toEqual(["emulator-5556"]);
    expect(change.removed).toEqual([]);
    expect(change.unlisted).toEqual([{ platform: "ios", outcome: "failed", reason: NO_CORE_SIMULATOR }]);
    expect(serials(tracker.devices())).toEqual(["emulator-5554", "emulator-5556", PHONE, SIMULATOR]);
  });

  it("keeps everything when both tools fail, with both reasons, and follows them again once they answer", async () => {
    const { tracker } = await mac();
    await tracker.refresh();
    android.breakServer();
    apple.breakCoreSimulator();
    android.unplug("emulator-5554");
    const change = await tracker.refresh();
    expect(change.added).toEqual([]);
    expect(change.removed).toEqual([]);
    expect(change.unlisted.map((u) => [u.platform, u.outcome, u.reason.split(": ")[0]])).toEqual([
      ["android", "failed", "adb devices -l failed"],
      ["ios", "failed", "xcrun simctl list devices failed"],
    ]);
    expect(serials(tracker.devices())).toEqual(["emulator-5554", PHONE, SIMULATOR]);
    android.mendServer();
    apple.mendCoreSimulator();
    const mended = await tracker.refresh();
    expect(mended.unlisted).toEqual([]);
    expect(serials(mended.removed)).toEqual(["emulator-5554"]);
    expect(serials(tracker.devices())).toEqual([PHONE, SIMULATOR]);
  });
});
