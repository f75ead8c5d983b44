import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { describeDevice, discoverDevices, listReadyDevices } from "./discover-devices.ts";

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
        },
        {
          serial: "2B161FDH2007TX",
          platform: "android",
          model: "Pixel 8 Pro",
          os_version: "15",
          modelFrom: "getprop",
          transportId: "2",
        },
      ],
      reason: null,
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

  it("finds nothing, without a reason, when no device is attached", async () => {
    for (const d of lab.devices()) lab.unplug(d.serial);
    expect(await discoverDevices({ env: lab.env })).toEqual({ devices: [], reason: null });
  });

  it("says why when adb is not on PATH", async () => {
    expect(await discoverDevices({ env: { PATH: dir } })).toEqual({
      devices: [],
      reason: "adb is not on PATH",
    });
  });
});

describe("describeDevice", () => {
  it("falls back to adb's model and an unknown release when the device vanished before getprop", async () => {
    const listing = await listReadyDevices({ env: lab.env });
    const phone = listing.entries?.find((e) => e.serial === "2B161FDH2007TX");
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
