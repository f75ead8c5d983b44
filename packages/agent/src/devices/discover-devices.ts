/**
 * Lists the Android devices this host can run steps on: `adb devices -l`, then one `adb shell getprop`
 * per ready device for its model and release. A host without adb simply has no Android devices, and
 * says why.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Device } from "../steps/step-types.ts";
import { which } from "../steps/which.ts";
import { type AdbDeviceEntry, parseAdbDevices, usableDevices } from "./adb-devices.ts";
import { deviceFacts, parseGetprop } from "./getprop.ts";

const run = promisify(execFile);

export interface DiscoverOptions {
  /** Env for adb (PATH decides which adb); the agent's own by default. */
  env?: NodeJS.ProcessEnv;
  /** Per adb call; adb can hang on a wedged device, so every call is bounded. */
  timeoutMs?: number;
  /** Kills the adb calls under way (the agent stopping). */
  signal?: AbortSignal;
}

/** A device as offered, plus where its model came from (see claimDevice). */
export interface FoundDevice extends Device {
  modelFrom: "getprop" | "adb";
  /** adb's transport_id: a device unplugged and plugged back between two looks gets a new one. */
  transportId: string | null;
}

export interface Discovery {
  devices: FoundDevice[];
  /** Why the list is empty when that is not simply "nothing plugged in", else null. */
  reason: string | null;
}

export type Listing = { entries: AdbDeviceEntry[]; reason: null } | { entries: null; reason: string };

/** The ready entries of `adb devices -l`, or why adb could not say. */
export async function listReadyDevices(options: DiscoverOptions = {}): Promise<Listing> {
  const env = options.env ?? process.env;
  const adb = await which("adb", env.PATH ?? "");
  if (adb === null) return { entries: null, reason: "adb is not on PATH" };
  try {
    const { stdout } = await run(adb, ["devices", "-l"], {
      env,
      timeout: options.timeoutMs ?? 10_000,
      signal: options.signal,
    });
    return { entries: usableDevices(parseAdbDevices(stdout)), reason: null };
  } catch (error) {
    return { entries: null, reason: `adb devices failed: ${(error as Error).message.split("\n")[0]}` };
  }
}

/**
 * Model and release of one ready device from a single `getprop` (all properties); adb's `model:` and
 * "unknown" when the device does not answer in time.
 */
export async function describeDevice(
  entry: AdbDeviceEntry,
  options: DiscoverOptions = {},
): Promise<FoundDevice> {
  const env = options.env ?? process.env;
  let props: Map<string, string> | null = null;
  try {
    const { stdout } = await run("adb", ["-s", entry.serial, "shell", "getprop"], {
      env,
      timeout: options.timeoutMs ?? 10_000,
      signal: options.signal,
      // A full dump is 30-60 KB; leave room for vendors that set far more.
      maxBuffer: 8 * 1024 * 1024,
    });
    props = parseGetprop(stdout);
  } catch {
    props = null;
  }
  const facts = deviceFacts(props, entry.attributes.model);
  return {
    serial: entry.serial,
    platform: "android",
    model: facts.model,
    os_version: facts.os_version,
    modelFrom: facts.modelFrom,
    transportId: entry.attributes.transport_id ?? null,
  };
}

/** One look at the host: every ready device, described. */
export async function discoverDevices(options: DiscoverOptions = {}): Promise<Discovery> {
  const listing = await listReadyDevices(options);
  if (listing.entries === null) return { devices: [], reason: listing.reason };
  const devices = await Promise.all(listing.entries.map((entry) => describeDevice(entry, options)));
  return { devices, reason: null };
}
