/**
 * The iOS devices of a Mac, as the agent offers them: simulators from `xcrun simctl list devices --json`
 * (every available iOS simulator, booted or not: a job boots the one it gets) and physical devices from
 * `xcrun devicectl list devices --json-output FILE`. The model is the device type's name ("iPhone 15 Pro"),
 * not the simulator's own name, which its owner may have changed; os_version is the runtime's ("17.5").
 */
import type { Device } from "../steps/step-types.ts";

export type SimulatorState = "Booted" | "Shutdown" | "Booting" | "Shutting Down" | "Creating" | string;

export interface Simulator {
  udid: string;
  name: string;
  state: SimulatorState;
  /** "iPhone 15 Pro", from the device type identifier (the name when there is none). */
  model: string;
  /** "17.5", from the runtime identifier. */
  osVersion: string;
}

const iosRuntime = /^com\.apple\.CoreSimulator\.SimRuntime\.iOS-(\d+(?:-\d+)*)$/;

/** Available iOS simulators in `simctl list devices --json` ({devices: {runtime: [device…]}}). */
export function parseSimctlDevices(json: unknown): Simulator[] {
  const devices = (json as { devices?: unknown } | null)?.devices;
  if (devices === null || typeof devices !== "object") return [];
  const found: Simulator[] = [];
  for (const [runtime, list] of Object.entries(devices as Record<string, unknown>)) {
    const version = iosRuntime.exec(runtime)?.[1];
    // watchOS, tvOS and visionOS runtimes are listed too; Testbay's devices are iOS ones.
    if (version === undefined || !Array.isArray(list)) continue;
    for (const entry of list as Array<Record<string, unknown>>) {
      if (typeof entry.udid !== "string" || typeof entry.name !== "string") continue;
      // A simulator whose runtime was deleted or is not supported by this Xcode is listed unavailable.
      if (entry.isAvailable === false) continue;
      const typeId = typeof entry.deviceTypeIdentifier === "string" ? entry.deviceTypeIdentifier : null;
      found.push({
        udid: entry.udid,
        name: entry.name,
        state: typeof entry.state === "string" ? entry.state : "Shutdown",
        model: typeId ? deviceTypeName(typeId) : entry.name,
        osVersion: version.replaceAll("-", "."),
      });
    }
  }
  return found;
}

/**
 * "com.apple.CoreSimulator.SimDeviceType.iPhone-15-Pro" → "iPhone 15 Pro"; "…iPhone-SE-3rd-generation" →
 * "iPhone SE (3rd generation)", as Xcode names that device type.
 */
export function deviceTypeName(identifier: string): string {
  const last = identifier.split(".").at(-1) ?? identifier;
  return last
    .replace(/-(\d+(?:st|nd|rd|th))-generation$/, " ($1 generation)")
    .replaceAll("-", " ")
    .trim();
}

export interface PhysicalDevice {
  udid: string;
  name: string;
  model: string;
  osVersion: string;
}

/**
 * Paired iOS devices in devicectl's JSON ({result: {devices: […]}}). A device whose tunnel is "unavailable"
 * is not reachable now (unplugged, or off the network); one not paired cannot run tests.
 */
export function parseDevicectlDevices(json: unknown): PhysicalDevice[] {
  const devices = (json as { result?: { devices?: unknown } } | null)?.result?.devices;
  if (!Array.isArray(devices)) return [];
  const found: PhysicalDevice[] = [];
  for (const device of devices as Array<Record<string, Record<string, unknown> | undefined>>) {
    const hardware = device.hardwareProperties ?? {};
    const properties = device.deviceProperties ?? {};
    const connection = device.connectionProperties ?? {};
    if (hardware.platform !== "iOS" || hardware.reality === "virtual") continue;
    if (connection.pairingState !== undefined && connection.pairingState !== "paired") continue;
    if (connection.tunnelState === "unavailable") continue;
    // xcodebuild's -destination id= wants the UDID, which is not devicectl's own `identifier`.
    const udid = typeof hardware.udid === "string" ? hardware.udid : null;
    if (udid === null) continue;
    found.push({
      udid,
      name: typeof properties.name === "string" ? properties.name : udid,
      model:
        typeof hardware.marketingName === "string"
          ? hardware.marketingName
          : typeof hardware.productType === "string"
            ? hardware.productType
            : "iPhone",
      osVersion: typeof properties.osVersionNumber === "string" ? properties.osVersionNumber : "unknown",
    });
  }
  return found;
}

/** Simulators and devices as the agent offers them in claims. */
export function appleDevices(
  simulators: readonly Simulator[],
  physical: readonly PhysicalDevice[],
): Device[] {
  return [
    ...physical.map((d) => ({
      serial: d.udid,
      platform: "ios" as const,
      model: d.model,
      os_version: d.osVersion,
    })),
    ...simulators.map((s) => ({
      serial: s.udid,
      platform: "ios" as const,
      model: s.model,
      os_version: s.osVersion,
    })),
  ];
}
