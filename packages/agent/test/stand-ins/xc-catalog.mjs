// What this Xcode can make simulators of: its device types and its iOS runtimes (`simctl list devicetypes`,
// `simctl list runtimes`), and how `simctl create` finds them from what its caller typed. The lab writes both
// lists (apple-lab.ts: its `deviceTypes` and `runtimes`, each runtime naming the device types it supports).
// Key order and values follow recorded `--json` output (README "Apple stand-ins", simctl create and lists).
import { join } from "node:path";
import { readJson, xcodeStateDir } from "./apple-state.mjs";

const PROFILES =
  "/Applications/Xcode.app/Contents/Developer/Platforms/iPhoneOS.platform/Library/Developer/CoreSimulator/Profiles";

export function deviceTypes() {
  return readJson(join(xcodeStateDir(), "devicetypes.json"), []);
}

export function runtimes() {
  return readJson(join(xcodeStateDir(), "runtimes.json"), []);
}

/** One device type as `list devicetypes -j` prints it (the keys of Xcode 15's recorded output, in its order). */
export function listedDeviceType(type) {
  return {
    productFamily: type.productFamily,
    bundlePath: `${PROFILES}/DeviceTypes/${type.name}.simdevicetype`,
    maxRuntimeVersion: 4294967295,
    maxRuntimeVersionString: "65535.255.255",
    identifier: type.identifier,
    modelIdentifier: type.modelIdentifier,
    minRuntimeVersionString: type.minRuntimeVersionString,
    minRuntimeVersion: encodedVersion(type.minRuntimeVersionString),
    name: type.name,
  };
}

/** One runtime as `list runtimes -j` prints it (the keys of the recorded iOS 17 output, in its order). */
export function listedRuntime(runtime) {
  const bundle = `/Library/Developer/CoreSimulator/Volumes/iOS_${runtime.buildversion}/Library/Developer/CoreSimulator/Profiles/Runtimes/iOS ${runtime.version}.simruntime`;
  const types = deviceTypes();
  return {
    bundlePath: bundle,
    buildversion: runtime.buildversion,
    platform: "iOS",
    runtimeRoot: `${bundle}/Contents/Resources/RuntimeRoot`,
    identifier: runtime.identifier,
    version: runtime.version,
    isInternal: false,
    isAvailable: true,
    name: `iOS ${runtime.version}`,
    supportedDeviceTypes: runtime.supportedDeviceTypes
      .map((id) => types.find((t) => t.identifier === id))
      .filter(Boolean)
      .map((t) => ({
        bundlePath: `${PROFILES}/DeviceTypes/${t.name}.simdevicetype`,
        name: t.name,
        identifier: t.identifier,
        productFamily: t.productFamily,
      })),
  };
}

/** CoreSimulator packs a version as major << 16 | minor << 8 | patch ("13.0.0" → 851968, as recorded). */
function encodedVersion(text) {
  const [major = 0, minor = 0, patch = 0] = String(text).split(".").map(Number);
  return major * 65536 + minor * 256 + patch;
}

/** A device type as `simctl create` takes it: its identifier or its name ("iPhone X" in simctl's usage text). */
export function findDeviceType(given) {
  return deviceTypes().find((t) => t.identifier === given || t.name === given);
}

/**
 * A runtime as `simctl create` takes it: its identifier, or its platform and version ("iOS17.4", "iOS 17.4"; the
 * forms of simctl's usage text). Runtime bundle paths are not modelled.
 */
export function findRuntime(given) {
  const spoken = /^iOS ?(\d+(?:\.\d+)*)$/.exec(given);
  return runtimes().find((r) => r.identifier === given || (spoken !== null && r.version === spoken[1]));
}

/** Without a runtime, simctl picks the newest one that supports the device type. */
export function newestRuntimeFor(type) {
  const newer = (a, b) => {
    const pa = a.version.split(".").map(Number);
    const pb = b.version.split(".").map(Number);
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pb[i] ?? 0) - (pa[i] ?? 0);
    }
    return 0;
  };
  return runtimes()
    .filter((r) => r.supportedDeviceTypes.includes(type.identifier))
    .sort(newer)[0];
}
