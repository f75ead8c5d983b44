/**
 * A device entry's `locale` and `orientation` (API.md §14), set before the run.
 *
 * Orientation: rotation is the system settings `accelerometer_rotation` (0: the sensor does not turn the
 * screen) and `user_rotation` (0 portrait, 1 landscape: Surface.ROTATION_0 / ROTATION_90), written with
 * `settings put system …` and read back to check.
 *
 * Locale: an emulator's system locale is the property `persist.sys.locale` (a BCP 47 tag, "fr-FR"); the
 * framework reads it when it starts, so after `setprop` the framework is restarted (`setprop ctl.restart
 * zygote`) and the agent waits for `sys.boot_completed` and the package manager to answer again. That needs a
 * shell allowed to set persist.* properties, which emulator images give (`adb root` on google_apis images;
 * the property is writable by the shell on userdebug builds) and production phones do not: on a physical
 * device the locale is only checked, and one that differs is an infrastructure error that says so.
 */
import type { Adb } from "./adb.ts";

export type Orientation = "portrait" | "landscape";

export interface DeviceLocaleOptions {
  adb: Adb;
  emulator: boolean;
  locale?: string;
  orientation?: Orientation;
  timeoutMs: number;
  log(line: string): void;
  /** How long to wait between looks while the framework restarts. */
  pollMs?: number;
}

export type SettingsResult = { ok: true } | { ok: false; deviceLost: boolean; message: string };

/** "en_US" (the plan's form, as Flank's) → "en-US" (persist.sys.locale's BCP 47 form). */
export function localeTag(locale: string): string {
  return locale.replace("_", "-");
}

export async function applyLocaleAndOrientation(options: DeviceLocaleOptions): Promise<SettingsResult> {
  if (options.orientation !== undefined) {
    const set = await setOrientation(options);
    if (!set.ok) return set;
  }
  if (options.locale !== undefined) return setLocale(options, options.locale);
  return { ok: true };
}

async function setOrientation(options: DeviceLocaleOptions): Promise<SettingsResult> {
  const { adb } = options;
  const rotation = options.orientation === "landscape" ? "1" : "0";
  const put = await adb.shell(
    `settings put system accelerometer_rotation 0 && settings put system user_rotation ${rotation}`,
    options.timeoutMs,
  );
  const read = put.ok ? await adb.shell("settings get system user_rotation", options.timeoutMs) : put;
  if (read.ok && read.lines.some((l) => l.trim() === rotation)) {
    options.log(`orientation ${options.orientation} (user_rotation ${rotation})`);
    return { ok: true };
  }
  const lost = read.deviceLost || !(await adb.present());
  const why = read.lines.findLast((l) => l.trim() !== "") ?? `exit code ${read.exitCode}`;
  return {
    ok: false,
    deviceLost: lost,
    message: `the device ${adb.serial} did not take orientation ${options.orientation}: ${why}`,
  };
}

/** The system locale: persist.sys.locale once someone chose one, else the build's ro.product.locale. */
async function currentLocale(adb: Adb, timeoutMs: number): Promise<string> {
  for (const property of ["persist.sys.locale", "ro.product.locale"]) {
    const read = await adb.shell(`getprop ${property}`, timeoutMs);
    const value = read.lines.map((l) => l.trim()).find((l) => l !== "");
    if (value) return value;
  }
  return "";
}

async function setLocale(options: DeviceLocaleOptions, locale: string): Promise<SettingsResult> {
  const { adb } = options;
  const tag = localeTag(locale);
  if ((await currentLocale(adb, options.timeoutMs)) === tag) {
    options.log(`locale ${tag} (already set)`);
    return { ok: true };
  }
  if (!options.emulator) {
    return {
      ok: false,
      deviceLost: false,
      message: `the device ${adb.serial} is a physical device and its locale is not ${tag}: Testbay sets a locale on emulators only; set it on the phone (Settings › System › Languages) or pick an emulator for this device entry`,
    };
  }
  const set = await adb.shell(
    `setprop persist.sys.locale ${tag} && setprop ctl.restart zygote`,
    options.timeoutMs,
  );
  if (!set.ok) {
    const why = set.lines.findLast((l) => l.trim() !== "") ?? `exit code ${set.exitCode}`;
    return {
      ok: false,
      deviceLost: set.deviceLost || !(await adb.present()),
      message: `the emulator ${adb.serial} did not take locale ${tag}: ${why}`,
    };
  }
  const deadline = Date.now() + options.timeoutMs;
  const pollMs = options.pollMs ?? 500;
  // The framework restarts: ready again once boot completes and the package manager answers.
  for (let look = 0; look < 10_000 && Date.now() < deadline; look++) {
    const booted = await adb.shell("getprop sys.boot_completed", options.timeoutMs);
    if (booted.deviceLost) break;
    if (booted.lines.some((l) => l.trim() === "1")) {
      const pm = await adb.shell("pm path android", options.timeoutMs);
      if (pm.ok && pm.lines.some((l) => l.startsWith("package:"))) {
        if ((await currentLocale(adb, options.timeoutMs)) === tag) {
          options.log(`locale ${tag} (persist.sys.locale, framework restarted)`);
          return { ok: true };
        }
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return {
    ok: false,
    deviceLost: !(await adb.present()),
    message: `the emulator ${adb.serial} did not come back with locale ${tag} after its framework restarted`,
  };
}
