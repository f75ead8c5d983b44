import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import {
  describeDevice,
  discoverDevices,
  listReadyDevices,
  type PlatformListing,
} from "./discover-devices.ts";

const listed = (said: PlatformListing) => (said.outcome === "listed" ? said.entries : []);

let lab: DeviceLab;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "testbay-discover-"));
  lab = await createDeviceLab({
    devices: [
      { serial: "emulator-5554", model: "sdk_gphone64_x86_64", release: "14" },
      { serial: "2B161FDH2007TX", model: "Pixel 8 Pro", release: "15", usb: "1-1" },
      { serial: "R58M42ABCDE", model: "SM-G991B", state: "unauthorized" },
    ],
  });
});
afterEach(async () => {
  lab.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe("discoverDevices", () => {
  it("describes each ready device from one getprop, its model with spaces and underscores as the device says", async () => {
    expect(await discoverDevices({ env: lab.env })).toEqual({
      devices: [
        {
          serial: "emulator-5554",
          platform: "android",
          model: "sdk_gphone64_x86_64",
          os_version: "14",
          modelFrom: "getprop",
          transportId: "1",
          api_level: 34,
          abi: "x86_64",
          emulator: true,
        },
        {
          serial: "2B161FDH2007TX",
          platform: "android",
          model: "Pixel 8 Pro",
          os_version: "15",
          modelFrom: "getprop",
          transportId: "2",
          api_level: 34,
          abi: "x86_64",
          emulator: false,
        },
      ],
      // The lab's PATH has the stand-ins' xcrun, which without an Apple lab is a Mac's without Xcode.
      unlisted: [
        {
          platform: "ios",
          outcome: "no-tool",
          reason: "xcrun has no simctl (the Command Line Tools without Xcode)",
        },
      ],
    });
    expect(lab.calls().map((c) => c.argv)).toEqual(
      expect.arrayContaining([
        ["devices", "-l"],
        ["-s", "emulator-5554", "shell", "getprop"],
        ["-s", "2B161FDH2007TX", "shell", "getprop"],
      ]),
    );
    expect(lab.calls()).toHaveLength(3);
  });

  it("finds nothing, and nothing wrong with adb, when no device is attached", async () => {
    for (const d of lab.devices()) lab.unplug(d.serial);
    const found = await discoverDevices({ env: lab.env });
    expect(found.devices).toEqual([]);
    expect(found.unlisted.map((u) => u.platform)).toEqual(["ios"]);
  });

  it("says why when neither adb nor xcrun is on PATH, as nothing to fix", async () => {
    expect(await discoverDevices({ env: { PATH: dir } })).toEqual({
      devices: [],
      unlisted: [
        { platform: "android", outcome: "no-tool", reason: "adb is not on PATH" },
        { platform: "ios", outcome: "no-tool", reason: "xcrun is not on PATH" },
      ],
    });
  });

  it("says in adb's own words why it could not list, not which command failed", async () => {
    lab.breakServer();
    const found = await discoverDevices({ env: lab.env });
    expect(found.devices).toEqual([]);
    expect(found.unlisted[0]).toEqual({
      platform: "android",
      outcome: "failed",
      reason: "adb devices -l failed: adb: failed to check server version: cannot connect to daemon",
    });
  });

  it("says that adb did not answer in time", async () => {
    // An adb whose server start hangs.
    await writeFile(join(dir, "adb"), "#!/bin/sh\nexec sleep 30\n");
    await chmod(join(dir, "adb"), 0o755);
    const listing = await listReadyDevices({
      env: { PATH: `${dir}${delimiter}${process.env.PATH ?? ""}` },
      timeoutMs: 200,
    });
    expect(listing.android).toEqual({
      outcome: "failed",
      reason: "adb devices -l failed: no answer within 200 ms",
    });
  });
});

describe("describeDevice", () => {
  it("falls back to adb's model and an unknown release when the device vanished before getprop", async () => {
    const listing = await listReadyDevices({ env: lab.env });
    const phone = listed(listing.android).find((e) => e.serial === "2B161FDH2007TX");
    expect(phone?.attributes.model).toBe("Pixel_8_Pro");
    lab.unplug("2B161FDH2007TX");
    expect(await describeDevice(phone as NonNullable<typeof phone>, { env: lab.env })).toMatchObject({
      model: "Pixel 8 Pro",
      os_version: "unknown",
      modelFrom: "adb",
    });
  });

  it("gives up on a device that does not answer within the time limit", async () => {
    // An adb whose getprop never returns, as on a wedged device.
    const adb = join(dir, "adb");
    await writeFile(adb, "#!/bin/sh\nexec sleep 30\n");
    await chmod(adb, 0o755);
    const started = performance.now();
    const device = await describeDevice(
      { serial: "emulator-5554", state: "device", attributes: { model: "Pixel_7" } },
      { env: { PATH: `${dir}${delimiter}${process.env.PATH ?? ""}` }, timeoutMs: 200 },
    );
    expect(device).toMatchObject({ model: "Pixel 7", os_version: "unknown", modelFrom: "adb" });
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
