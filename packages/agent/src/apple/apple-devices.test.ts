import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "../steps/test-context.ts";
import { appleDevices, deviceTypeName, parseDevicectlDevices, parseSimctlDevices } from "./apple-devices.ts";

const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES_DIR, "apple", name), "utf8"));

describe("parseSimctlDevices", () => {
  it("reads the iOS simulators of a recorded `simctl list devices --json`, runtime as version", () => {
    expect(parseSimctlDevices(fixture("simctl-list-devices-booted.json"))).toEqual([
      {
        udid: "9EC90A99-6924-472D-8CDD-4D8234AB4779",
        name: "iPhone 11",
        state: "Booted",
        model: "iPhone 11",
        osVersion: "14.0",
      },
    ]);
  });

  it("leaves out unavailable simulators and other platforms' runtimes, keeps shut down ones", () => {
    const listed = parseSimctlDevices({
      devices: {
        "com.apple.CoreSimulator.SimRuntime.iOS-17-5": [
          {
            udid: "A",
            name: "My phone",
            state: "Shutdown",
            isAvailable: true,
            deviceTypeIdentifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-15-Pro",
          },
          { udid: "B", name: "iPhone 8", state: "Shutdown", isAvailable: false },
        ],
        "com.apple.CoreSimulator.SimRuntime.watchOS-10-5": [
          { udid: "C", name: "Apple Watch", state: "Booted", isAvailable: true },
        ],
      },
    });
    expect(listed).toEqual([
      { udid: "A", name: "My phone", state: "Shutdown", model: "iPhone 15 Pro", osVersion: "17.5" },
    ]);
  });

  it("reads nothing from what is not a listing", () => {
    expect(parseSimctlDevices(null)).toEqual([]);
    expect(parseSimctlDevices({ devices: [] })).toEqual([]);
  });
});

describe("deviceTypeName", () => {
  it("names device types as Xcode does", () => {
    expect(deviceTypeName("com.apple.CoreSimulator.SimDeviceType.iPhone-11")).toBe("iPhone 11");
    expect(deviceTypeName("com.apple.CoreSimulator.SimDeviceType.iPhone-SE-3rd-generation")).toBe(
      "iPhone SE (3rd generation)",
    );
  });
});

describe("parseDevicectlDevices", () => {
  it("reads a paired device of a recorded devicectl listing by its UDID and marketing name", () => {
    expect(parseDevicectlDevices(fixture("devicectl-list-devices.json"))).toEqual([
      {
        udid: "00000000-0000000000000000",
        name: "Some iOS device",
        model: "iPad mini (5th generation)",
        osVersion: "17.3",
      },
    ]);
  });

  it("leaves out unpaired, unreachable and non-iOS devices", () => {
    const device = (connection: object, hardware: object = {}) => ({
      connectionProperties: { pairingState: "paired", tunnelState: "disconnected", ...connection },
      deviceProperties: { name: "x", osVersionNumber: "17.0" },
      hardwareProperties: {
        platform: "iOS",
        reality: "physical",
        udid: "U",
        marketingName: "iPhone 13",
        ...hardware,
      },
    });
    const listed = parseDevicectlDevices({
      result: {
        devices: [
          device({ pairingState: "unpaired" }),
          device({ tunnelState: "unavailable" }),
          device({}, { platform: "watchOS" }),
          device({ tunnelState: "connected" }),
        ],
      },
    });
    expect(listed).toEqual([{ udid: "U", name: "x", model: "iPhone 13", osVersion: "17.0" }]);
  });
});

describe("appleDevices", () => {
  it("offers devices and simulators as iOS devices", () => {
    expect(
      appleDevices(
        [{ udid: "S", name: "iPhone 15", state: "Shutdown", model: "iPhone 15", osVersion: "17.5" }],
        [{ udid: "P", name: "Ann's", model: "iPhone 13", osVersion: "17.3" }],
      ),
    ).toEqual([
      { serial: "P", platform: "ios", model: "iPhone 13", os_version: "17.3" },
      { serial: "S", platform: "ios", model: "iPhone 15", os_version: "17.5" },
    ]);
  });
});
