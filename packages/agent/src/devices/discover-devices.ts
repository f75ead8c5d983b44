/**
 * Lists the devices this host can run steps on: Android devices from `adb devices -l`, then one `adb shell
 * getprop` per ready device for its model and release; on a Mac, iOS simulators and devices from xcrun
 * (apple/apple-devices.ts), which travel through the same listing as entries already described. Each platform
 * is listed on its own: a broken adb (no adb server can start) must not hide the simulators, nor a CoreSimulator
 * hiccup the Android devices. A host without adb simply has no Android devices, one without xcrun (or with the
 * Command Line Tools but no Xcode) no iOS ones, and says why.
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
import { whyToolFailed } from "./why-tool-failed.ts";

const run = promisify(execFile);

export interface DiscoverOptions {
  /** Env for adb and xcrun (PATH decides which); the agent's own by default. */
  env?: NodeJS.ProcessEnv;
  /** Per adb (or xcrun) call; adb can hang on a wedged device, so every call is bounded. */
  timeoutMs?: number;
  /** Kills the calls under way (the agent stopping). */
  signal?: AbortSignal;
}

/** A device as offered, plus where its model came from (see claimDevice). */
export interface FoundDevice extends Device {
  modelFrom: "getprop" | "adb" | "xcrun";
  /** adb's transport_id: a device unplugged and plugged back between two looks gets a new one. */
  transportId: string | null;
  /** API.md §13 facts read with getprop (Android): absent when unknown. */
  api_level?: number | null;
  abi?: string | null;
  emulator?: boolean;
}

export type Platform = Device["platform"];

/** The platforms in the order their devices are listed and offered: adb's, then xcrun's. */
export const PLATFORMS: readonly Platform[] = ["android", "ios"];

/** How people call the platform, and the tool that lists its devices: for log lines. */
export const PLATFORM_NAMES: Record<Platform, { name: string; tool: string }> = {
  android: { name: "Android", tool: "adb" },
  ios: { name: "iOS", tool: "xcrun simctl" },
};

/**
 * What one platform's tool said at one look:
 * - `listed`: its ready devices (none is an answer too: nothing plugged in);
 * - `no-tool`: the tool is not on this host, which then has no devices of that platform; nothing is wrong;
 * - `failed`: the tool is there but could not list this time (no adb server, a wedged adb, CoreSimulator down),
 *   which says nothing about the devices: the last known ones stand.
 */
export type PlatformListing =
  | { outcome: "listed"; entries: AdbDeviceEntry[] }
  | { outcome: "no-tool" | "failed"; reason: string };

/** One look at the host, platform by platform. */
export type Listing = Record<Platform, PlatformListing>;

/** A platform whose devices were not listed at a look, and why. */
export interface Unlisted {
  platform: Platform;
  outcome: "no-tool" | "failed";
  reason: string;
}

/** The platforms of a listing that did not list, in PLATFORMS order. */
export function unlistedPlatforms(listing: Listing): Unlisted[] {
  return PLATFORMS.flatMap((platform) => {
    const said = listing[platform];
    return said.outcome === "listed" ? [] : [{ platform, outcome: said.outcome, reason: said.reason }];
  });
}

export interface Discovery {
  devices: FoundDevice[];
  /** Each platform whose devices are not in `devices` because its tool is missing or failed, and why. */
  unlisted: Unlisted[];
}

/** Marks an entry that is an iOS simulator or device, described by xcrun already (no getprop). */
const IOS_ENTRY = "testbay_ios";

/** The ready entries of `adb devices -l` and the iOS devices xcrun lists, each or why it could not say. */
export async function listReadyDevices(options: DiscoverOptions = {}): Promise<Listing> {
  const [android, ios] = await Promise.all([listAndroidDevices(options), listIosDevices(options)]);
  return { android, ios };
}

async function listAndroidDevices(options: DiscoverOptions): Promise<PlatformListing> {
  const env = options.env ?? process.env;
  const adb = await which("adb", env.PATH ?? "");
  if (adb === null) return { outcome: "no-tool", reason: "adb is not on PATH" };
  const timeout = options.timeoutMs ?? 10_000;
  try {
    const { stdout } = await run(adb, ["devices", "-l"], { env, timeout, signal: options.signal });
    return { outcome: "listed", entries: usableDevices(parseAdbDevices(stdout)) };
  } catch (error) {
    return { outcome: "failed", reason: `adb devices -l failed: ${whyToolFailed(error, timeout)}` };
  }
}

/** xcrun's answer on a Mac with the Command Line Tools and no Xcode: no simulators to list, nothing broken. */
const NO_XCODE = /unable to find utility "simctl"/;

/**
 * Available iOS simulators (`xcrun simctl list devices --json`) and paired devices (`xcrun devicectl list
 * devices --json-output FILE`; an Xcode before 15 has no devicectl, and then simply no devices).
 */
async function listIosDevices(options: DiscoverOptions): Promise<PlatformListing> {
  const env = options.env ?? process.env;
  const xcrun = await which("xcrun", env.PATH ?? "");
  if (xcrun === null) return { outcome: "no-tool", reason: "xcrun is not on PATH" };
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
    const why =
      error instanceof SyntaxError ? `printed no JSON (${error.message})` : whyToolFailed(error, timeout);
    if (NO_XCODE.test(why)) {
      return { outcome: "no-tool", reason: "xcrun has no simctl (the Command Line Tools without Xcode)" };
    }
    return { outcome: "failed", reason: `xcrun simctl list devices failed: ${why}` };
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
  return { outcome: "listed", entries };
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
    api_level: facts.api_level,
    abi: facts.abi,
    // An emulator says so in its properties; without them its serial (emulator-PORT) does.
    emulator: facts.emulator || /^emulator-\d+$/.test(entry.serial),
  };
}

/** One look at the host: every ready device of the platforms that listed, described, and why the others are missing. */
export async function discoverDevices(options: DiscoverOptions = {}): Promise<Discovery> {
  const listing = await listReadyDevices(options);
  const entries = PLATFORMS.flatMap((platform) => {
    const said = listing[platform];
    return said.outcome === "listed" ? said.entries : [];
  });
  const devices = await Promise.all(entries.map((entry) => describeDevice(entry, options)));
  return { devices, unlisted: unlistedPlatforms(listing) };
}
