/**
 * Lists the Android devices this host can run steps on: `adb devices -l`, then the Android release of each
 * ready device. A host without adb simply has no Android devices, and says why.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Device } from "../steps/step-types.ts";
import { which } from "../steps/which.ts";
import { parseAdbDevices, usableDevices } from "./adb-devices.ts";

const run = promisify(execFile);

export interface DiscoverOptions {
  /** Env for adb (PATH decides which adb); the agent's own by default. */
  env?: NodeJS.ProcessEnv;
  /** Per adb call; adb can hang on a wedged device, so every call is bounded. */
  timeoutMs?: number;
}

export interface Discovery {
  devices: Device[];
  /** Why the list is empty when that is not simply "nothing plugged in", else null. */
  reason: string | null;
}

export async function discoverDevices(options: DiscoverOptions = {}): Promise<Discovery> {
  const env = options.env ?? process.env;
  const timeout = options.timeoutMs ?? 10_000;
  const adb = await which("adb", env.PATH ?? "");
  if (adb === null) return { devices: [], reason: "adb is not on PATH" };

  let listing: string;
  try {
    listing = (await run(adb, ["devices", "-l"], { env, timeout })).stdout;
  } catch (error) {
    return { devices: [], reason: `adb devices failed: ${(error as Error).message}` };
  }
  const devices: Device[] = [];
  for (const entry of usableDevices(parseAdbDevices(listing))) {
    devices.push({
      serial: entry.serial,
      platform: "android",
      // Kept as adb prints it ("Pixel_8"): the same string a plan's device spec is written against.
      model: entry.attributes.model ?? "unknown",
      os_version: await androidRelease(adb, entry.serial, env, timeout),
    });
  }
  return { devices, reason: null };
}

/** ro.build.version.release ("14"); "unknown" when the device does not answer in time. */
async function androidRelease(adb: string, serial: string, env: NodeJS.ProcessEnv, timeout: number) {
  try {
    const { stdout } = await run(adb, ["-s", serial, "shell", "getprop", "ro.build.version.release"], {
      env,
      timeout,
    });
    return stdout.trim() || "unknown";
  } catch {
    return "unknown";
  }
}
