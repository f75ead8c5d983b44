import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "../steps/test-context.ts";
import { parseAdbDevices, usableDevices } from "./adb-devices.ts";

const fixture = (name: string) => readFileSync(join(FIXTURES_DIR, name), "utf8");

describe("parseAdbDevices", () => {
  it("reads an emulator with its attributes", () => {
    expect(parseAdbDevices(fixture("adb-devices-emulator.txt"))).toEqual([
      {
        serial: "emulator-5554",
        state: "device",
        attributes: {
          product: "sdk_gphone64_x86_64",
          model: "sdk_gphone64_x86_64",
          device: "emu64xa",
          transport_id: "1",
        },
      },
    ]);
  });

  it("reads a USB phone, model as adb prints it", () => {
    const [phone] = parseAdbDevices(fixture("adb-devices-usb-phone.txt"));
    expect(phone).toMatchObject({ serial: "2B161FDH2007TX", state: "device" });
    expect(phone?.attributes).toMatchObject({ usb: "1-1", model: "Pixel_8", product: "shiba" });
  });

  it.each([
    ["adb-devices-unauthorized.txt", "R58M42ABCDE", "unauthorized"],
    ["adb-devices-offline.txt", "emulator-5556", "offline"],
  ])("reads %s and does not count it as usable", (file, serial, state) => {
    const entries = parseAdbDevices(fixture(file));
    expect(entries).toMatchObject([{ serial, state }]);
    expect(usableDevices(entries)).toEqual([]);
  });

  it("reads an empty list", () => {
    expect(parseAdbDevices(fixture("adb-devices-empty.txt"))).toEqual([]);
  });

  it("skips daemon chatter and keeps a multi-word state whole", () => {
    const entries = parseAdbDevices(fixture("adb-devices-mixed.txt"));
    expect(entries.map((e) => [e.serial, e.state])).toEqual([
      ["emulator-5554", "device"],
      ["2B161FDH2007TX", "device"],
      ["R58M42ABCDE", "unauthorized"],
      ["emulator-5556", "offline"],
      [
        "0123456789ABCDEF",
        "no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html]",
      ],
    ]);
    expect(entries[4]?.attributes).toEqual({ usb: "1-4", transport_id: "5" });
    expect(usableDevices(entries).map((e) => e.serial)).toEqual(["emulator-5554", "2B161FDH2007TX"]);
  });
});
