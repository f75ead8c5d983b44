/**
 * Lists the devices this host can run steps on: Android devices from `adb devices -l`, then one `adb shell
 * getprop` per ready device for its model and release; on a Mac, iOS simulators and devices from xcrun
 * (apple/apple-devices.ts), which travel through the same listing as entries already described. A host
 * without adb simply has no Android devices, one without xcrun no iOS ones, and says why.
 */
import { execFile } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { appleDevices, parseDevicectlDevices, parseSimctlDevices } from "../apple/apple-devices.ts";
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
  modelFrom: "getprop" | "adb" | "xcrun";
  /** adb's transport_id: a device unplugged and plugged back between two looks gets a new one. */
  transportId: string | null;
}

export interface Discovery {
  devices: FoundDevice[];
  /** Why the list is empty when that is not simply "nothing plugged in", else null. */
  reason: string | null;
}

export type Listing = { entries: AdbDeviceEntry[]; reason: null } | { entries: null; reason: string };

/** Marks an entry that is an iOS simulator or device, described by xcrun already (no getprop). */
const IOS_ENTRY = "testbay_ios";

/**
 * The ready entries of `adb devices -l` and the iOS devices xcrun lists, or why they could not be listed (the
 * last known set is kept then: one failed look says nothing about the devices).
 */
export async function listReadyDevices(options: DiscoverOptions = {}): Promise<Listing> {
  const [android, ios] = await Promise.all([listAndroidDevices(options), listIosDevices(options)]);
  if (android.entries === null && !android.absent) return { entries: null, reason: android.reason };
  // simctl that fails (a Mac with the Command Line Tools but no Xcode: "unable to find utility simctl") must
  // not hide the Android devices: such a host simply has no iOS devices.
  if (android.entries === null && ios.entries === null) {
    return { entries: null, reason: ios.absent ? android.reason : `${android.reason}; ${ios.reason}` };
  }
  return { entries: [...(android.entries ?? []), ...(ios.entries ?? [])], reason: null };
}

type ToolListing = Listing & { absent?: boolean };

async function listAndroidDevices(options: DiscoverOptions): Promise<ToolListing> {
  const env = options.env ?? process.env;
  const adb = await which("adb", env.PATH ?? "");
  if (adb === null) return { entries: null, reason: "adb is not on PATH", absent: true };
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
 * Available iOS simulators (`xcrun simctl list devices --json`) and paired devices (`xcrun devicectl list
 * devices --json-output FILE`; an Xcode before 15 has no devicectl, and then simply no devices).
 */
async function listIosDevices(options: DiscoverOptions): Promise<ToolListing> {
  const env = options.env ?? process.env;
  const xcrun = await which("xcrun", env.PATH ?? "");
  if (xcrun === null) return { entries: null, reason: "xcrun is not on PATH", absent: true };
  const timeout = options.timeoutMs ?? 30_000;
  let simulators: ReturnType<typeof parseSimctlDevices>;
  try {
    const { stdout } = await run(xcrun, ["simctl", "list", "devices", "--json"], {
      env,
      timeout,
      signal: options.signal,
      maxBuffer: 16 * 1024 * 1024,
    });
    simulators = parseSimctlDevices(JSON.parse(stdout));
  } catch (error) {
    return {
      entries: null,
      reason: `simctl list devices failed: ${(error as Error).message.split("\n")[0]}`,
    };
  }
  const file = path.join(tmpdir(), `testbay-devicectl-${process.pid}-${Date.now()}-${Math.random()}.json`);
  let physical: ReturnType<typeof parseDevicectlDevices> = [];
  try {
    await run(xcrun, ["devicectl", "list", "devices", "--json-output", file], {
      env,
      timeout,
      signal: options.signal,
    });
    physical = parseDevicectlDevices(JSON.parse(await readFile(file, "utf8")));
  } catch {
    physical = [];
  } finally {
    await rm(file, { force: true });
  }
  const entries = appleDevices(simulators, physical).map((device) => ({
    serial: device.serial,
    state: "device",
    attributes: { [IOS_ENTRY]: "1", model: device.model, os_version: device.os_version },
  }));
  return { entries, reason: null };
}

/**
 * Model and release of one ready device from a single `getprop` (all properties); adb's `model:` and
 * "unknown" when the device does not answer in time.
 */
export async function describeDevice(
  entry: AdbDeviceEntry,
  options: DiscoverOptions = {},
): Promise<FoundDevice> {
  if (entry.attributes[IOS_ENTRY] !== undefined) {
    return {
      serial: entry.serial,
      platform: "ios",
      model: entry.attributes.model ?? "iPhone",
      os_version: entry.attributes.os_version ?? "unknown",
      modelFrom: "xcrun",
      transportId: null,
    };
  }
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
