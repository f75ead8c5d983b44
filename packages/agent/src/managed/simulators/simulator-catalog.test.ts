import { describe, expect, it } from "vitest";
import { parseDeviceTypes, parseRuntimes, resolveSimulatorSpec } from "./simulator-catalog.ts";
import { parseSimulatorSpec } from "./simulator-spec.ts";

const type = (name: string, productFamily = "iPhone") => ({
  productFamily,
  bundlePath: `/Applications/Xcode.app/…/DeviceTypes/${name}.simdevicetype`,
  identifier: `com.apple.CoreSimulator.SimDeviceType.${name.replace(/[^A-Za-z0-9]+/g, "-")}`,
  name,
});
const TYPES = parseDeviceTypes({
  devicetypes: [
    type("iPhone 15"),
    type("iPhone 16 Pro"),
    type("iPad Air 11-inch (M2)", "iPad"),
    type("Apple TV", "Apple TV"),
  ],
});
const runtime = (version: string, types: string[], extra: Record<string, unknown> = {}) => ({
  bundlePath: `/Library/…/iOS ${version}.simruntime`,
  buildversion: "21E213",
  platform: "iOS",
  identifier: `com.apple.CoreSimulator.SimRuntime.iOS-${version.replaceAll(".", "-")}`,
  version,
  isInternal: false,
  isAvailable: true,
  name: `iOS ${version}`,
  supportedDeviceTypes: types.map((n) => ({ name: n, identifier: type(n).identifier })),
  ...extra,
});
const RUNTIMES = parseRuntimes({
  runtimes: [
    runtime("17.4", ["iPhone 15", "iPad Air 11-inch (M2)"]),
    runtime("17.5", ["iPhone 15"]),
    runtime("18.0", ["iPhone 15", "iPhone 16 Pro"]),
    runtime("18.1", ["iPhone 15"], { isAvailable: false }),
    {
      ...runtime("10.0", []),
      platform: "watchOS",
      identifier: "com.apple.CoreSimulator.SimRuntime.watchOS-10-0",
    },
  ],
});
const resolve = (given: string) => resolveSimulatorSpec(parseSimulatorSpec(given), TYPES, RUNTIMES);

describe("resolveSimulatorSpec", () => {
  it("matches the device type by name (any case) or identifier and the runtime by version", () => {
    const resolved = resolve("iphone 15@17.4=2");
    expect(resolved).toMatchObject({
      deviceType: { name: "iPhone 15", identifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-15" },
      runtime: { identifier: "com.apple.CoreSimulator.SimRuntime.iOS-17-4", version: "17.4" },
      pool: "iPhone 15@17.4",
    });
    expect(resolved.spec.count).toBe(2);
    expect(resolve("com.apple.CoreSimulator.SimDeviceType.iPhone-16-Pro@18").pool).toBe("iPhone 16 Pro@18.0");
    expect(resolve("iPhone 15@com.apple.CoreSimulator.SimRuntime.iOS-17-5").pool).toBe("iPhone 15@17.5");
  });

  it("takes the newest available runtime of a major version that runs the device type", () => {
    // 18.1 is not available; 18.0 runs the iPhone 15.
    expect(resolve("iPhone 15@18").pool).toBe("iPhone 15@18.0");
    expect(resolve("iPhone 15@17").pool).toBe("iPhone 15@17.5");
    expect(resolve("iPad Air 11-inch (M2)@17").pool).toBe("iPad Air 11-inch (M2)@17.4");
  });

  it("names this Xcode's iPhone and iPad device types when the device type is unknown", () => {
    expect(() => resolve("iPhone 99@17.4")).toThrow(
      '--simulator "iPhone 99@17.4": this Xcode has no device type "iPhone 99" (xcrun simctl list devicetypes). ' +
        "Its iPhone and iPad device types: iPhone 15, iPhone 16 Pro, iPad Air 11-inch (M2).",
    );
  });

  it("names the installed iOS runtimes and how to add one when the version is not installed", () => {
    expect(() => resolve("iPhone 15@17.2")).toThrow(
      '--simulator "iPhone 15@17.2": no iOS 17.2 simulator runtime is installed (xcrun simctl list runtimes). ' +
        "Installed: iOS 17.4, iOS 17.5, iOS 18.0. Xcode's Settings → Components (or xcodebuild -downloadPlatform iOS) adds runtimes.",
    );
    // An unavailable runtime is not installed for this purpose.
    expect(() => resolve("iPhone 15@18.1")).toThrow("no iOS 18.1 simulator runtime is installed");
  });

  it("says which device types a runtime runs when it cannot run the one asked for", () => {
    expect(() => resolve("iPhone 16 Pro@17.4")).toThrow(
      '--simulator "iPhone 16 Pro@17.4": iOS 17.4 cannot run iPhone 16 Pro. It runs: iPhone 15, iPad Air 11-inch (M2).',
    );
  });
});
