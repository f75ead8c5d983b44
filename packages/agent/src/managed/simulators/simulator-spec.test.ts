import { describe, expect, it } from "vitest";
import { parseSimulatorSpec } from "./simulator-spec.ts";

describe("parseSimulatorSpec", () => {
  it("reads a device type, an OS version and how many", () => {
    expect(parseSimulatorSpec("iPhone 15@17.4=2")).toEqual({
      deviceType: "iPhone 15",
      os: "17.4",
      count: 2,
      given: "iPhone 15@17.4=2",
    });
  });

  it("takes one simulator without =N, device type identifiers, names with parentheses and 'iOS 17.4'", () => {
    expect(parseSimulatorSpec("iPhone SE (3rd generation)@iOS 17.4")).toMatchObject({
      deviceType: "iPhone SE (3rd generation)",
      os: "17.4",
      count: 1,
    });
    expect(
      parseSimulatorSpec(
        "com.apple.CoreSimulator.SimDeviceType.iPhone-15@com.apple.CoreSimulator.SimRuntime.iOS-17-4",
      ),
    ).toMatchObject({
      deviceType: "com.apple.CoreSimulator.SimDeviceType.iPhone-15",
      os: "com.apple.CoreSimulator.SimRuntime.iOS-17-4",
    });
    expect(parseSimulatorSpec(" iPad Air 11-inch (M2) @ 18 ")).toMatchObject({
      deviceType: "iPad Air 11-inch (M2)",
      os: "18",
    });
  });

  it("refuses what is not DEVICE_TYPE@OS[=N], saying what is wrong and showing the form", () => {
    expect(() => parseSimulatorSpec("iPhone 15")).toThrow(
      '--simulator "iPhone 15": expected DEVICE_TYPE@OS[=N], e.g. --simulator "iPhone 15@17.4=2"',
    );
    expect(() => parseSimulatorSpec("@17.4")).toThrow("expected DEVICE_TYPE@OS[=N]");
    expect(() => parseSimulatorSpec("iPhone 15@latest")).toThrow(
      '"latest" is not an iOS version (such as 17.4) or runtime identifier',
    );
    for (const bad of ["iPhone 15@17.4=0", "iPhone 15@17.4=x", "iPhone 15@17.4=17", "iPhone 15@17.4="]) {
      expect(() => parseSimulatorSpec(bad), bad).toThrow("N must be a whole number from 1 to 16");
    }
  });
});
