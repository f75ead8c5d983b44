/**
 * Which device type and runtime a `--simulator` spec names on this Mac, read from `xcrun simctl list devicetypes
 * -j` and `xcrun simctl list runtimes -j` (the keys as recorded in public captures, see
 * test/stand-ins/README.md "xcrun simctl"). A spec nothing matches is the operator's mistake: the message names
 * what is installed, so the fix is in it (API.md §13; the agent refuses to start, as cli/start-refusal.ts's
 * refusals do).
 */
import type { SimulatorSpec } from "./simulator-spec.ts";

export interface DeviceType {
  name: string;
  identifier: string;
  productFamily: string | null;
}

export interface Runtime {
  identifier: string;
  /** "17.4". */
  version: string;
  /** The device types it runs, by identifier; null when simctl did not say (older Xcodes). */
  supportedDeviceTypes: string[] | null;
}

/** A spec matched to what simctl can make. */
export interface ResolvedSimulatorSpec {
  spec: SimulatorSpec;
  deviceType: DeviceType;
  runtime: Runtime;
  /** "iPhone 15@17.4": a managed device's `pool` (API.md §13). */
  pool: string;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function parseDeviceTypes(json: unknown): DeviceType[] {
  const list = (json as { devicetypes?: unknown } | null)?.devicetypes;
  if (!Array.isArray(list)) return [];
  return list.flatMap((t: Record<string, unknown>) => {
    const name = str(t.name);
    const identifier = str(t.identifier);
    return name && identifier ? [{ name, identifier, productFamily: str(t.productFamily) }] : [];
  });
}

/** The iOS runtimes simctl can use now (watchOS, tvOS, visionOS and unavailable ones left out). */
export function parseRuntimes(json: unknown): Runtime[] {
  const list = (json as { runtimes?: unknown } | null)?.runtimes;
  if (!Array.isArray(list)) return [];
  return list.flatMap((r: Record<string, unknown>) => {
    const identifier = str(r.identifier);
    const version = str(r.version);
    const ios = r.platform === "iOS" || (identifier ?? "").includes(".SimRuntime.iOS-");
    if (!identifier || !version || !ios || r.isAvailable === false) return [];
    const supported = Array.isArray(r.supportedDeviceTypes)
      ? r.supportedDeviceTypes.flatMap((t: Record<string, unknown>) => str(t?.identifier) ?? [])
      : null;
    return [{ identifier, version, supportedDeviceTypes: supported }];
  });
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** "17.4" is 17.4 (and 17.4.x), "17" the newest 17.x; an identifier is itself. */
function runtimesFor(os: string, runtimes: readonly Runtime[]): Runtime[] {
  if (os.startsWith("com.apple.")) return runtimes.filter((r) => r.identifier === os);
  return runtimes
    .filter((r) => r.version === os || r.version.startsWith(`${os}.`))
    .sort((a, b) => compareVersions(b.version, a.version));
}

const iosFamilies = new Set(["iPhone", "iPad"]);

/**
 * Matches a spec: the device type by identifier or name (case does not matter), the runtime by version. Throws
 * an Error naming what this Xcode has when nothing matches, or when the runtime cannot run the device type.
 */
export function resolveSimulatorSpec(
  spec: SimulatorSpec,
  deviceTypes: readonly DeviceType[],
  runtimes: readonly Runtime[],
): ResolvedSimulatorSpec {
  const wanted = spec.deviceType.toLowerCase();
  const deviceType = deviceTypes.find(
    (t) => t.identifier === spec.deviceType || t.name.toLowerCase() === wanted,
  );
  const iosTypes = deviceTypes.filter((t) => t.productFamily === null || iosFamilies.has(t.productFamily));
  if (!deviceType) {
    throw new Error(
      `--simulator "${spec.given}": this Xcode has no device type "${spec.deviceType}" (xcrun simctl list devicetypes). ` +
        `Its iPhone and iPad device types: ${iosTypes.map((t) => t.name).join(", ") || "none"}.`,
    );
  }
  const installed = runtimes.map((r) => `iOS ${r.version}`).join(", ") || "none";
  const matching = runtimesFor(spec.os, runtimes);
  if (matching.length === 0) {
    throw new Error(
      `--simulator "${spec.given}": no iOS ${spec.os} simulator runtime is installed (xcrun simctl list runtimes). ` +
        `Installed: ${installed}. Xcode's Settings → Components (or xcodebuild -downloadPlatform iOS) adds runtimes.`,
    );
  }
  const runtime = matching.find(
    (r) => r.supportedDeviceTypes === null || r.supportedDeviceTypes.includes(deviceType.identifier),
  );
  if (!runtime) {
    const first = matching[0] as Runtime;
    const runs = iosTypes
      .filter((t) => first.supportedDeviceTypes?.includes(t.identifier))
      .map((t) => t.name);
    throw new Error(
      `--simulator "${spec.given}": iOS ${first.version} cannot run ${deviceType.name}. ` +
        `It runs: ${runs.join(", ") || "no iPhone or iPad"}.`,
    );
  }
  return { spec, deviceType, runtime, pool: `${deviceType.name}@${runtime.version}` };
}
