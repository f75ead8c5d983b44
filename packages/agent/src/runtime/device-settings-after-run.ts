/**
 * A device entry's `locale` and `orientation` (API.md §14) change the device itself
 * (steps/device-entry-settings.ts). A managed emulator is reset after every run, so nothing is left of them; a
 * device the agent does not manage (a phone on the desk, an emulator someone else started) is not, so the agent
 * reads what the run is about to change before it runs and puts it back after, as it uninstalls the run's APKs
 * (uninstall-after-run.ts): the next run, or the phone's owner, finds the screen and language it had.
 */
import type { AgentJob } from "@testbay/client";
import { Adb } from "../android/adb.ts";
import { applyLocaleAndOrientation } from "../android/device-locale.ts";

/** What `settings get` prints for a key never set: putting it back is deleting it. */
const unset = "null";
const commandMs = 60_000;
/** A locale change restarts the framework (android/device-locale.ts): well under this on an emulator. */
const localeMs = 120_000;

interface Before {
  rotation?: { accelerometer: string; user: string };
  locale?: string;
}

/**
 * Reads what the job's device entry will change on an Android device the agent does not manage, and returns
 * what puts it back, or null when the entry changes nothing. A read that fails leaves that setting as the run
 * leaves it (said in the log): guessing a value would change the device more.
 */
export async function rememberDeviceSettings(
  job: AgentJob,
  device: { serial: string; platform: string; emulator?: boolean | null },
  options: { env: NodeJS.ProcessEnv; log: (message: string) => void; workDir: string },
): Promise<(() => Promise<void>) | null> {
  const entry = job.device_entry;
  if (device.platform !== "android" || !entry || (!entry.locale && !entry.orientation)) return null;
  const adb = new Adb(device.serial, {
    workDir: options.workDir,
    signal: new AbortController().signal,
    env: options.env,
  });
  const before: Before = {};
  if (entry.orientation) {
    const accelerometer = await readSetting(adb, "accelerometer_rotation");
    const user = await readSetting(adb, "user_rotation");
    if (accelerometer !== undefined && user !== undefined) before.rotation = { accelerometer, user };
    else options.log(`device ${device.serial}: could not read its rotation; it stays as the run leaves it`);
  }
  if (entry.locale) {
    const locale = await readLocale(adb);
    if (locale) before.locale = locale;
    else options.log(`device ${device.serial}: could not read its locale; it stays as the run leaves it`);
  }
  return async () => {
    if (before.rotation) await putRotationBack(adb, before.rotation, options.log);
    if (before.locale) {
      const back = await applyLocaleAndOrientation({
        adb,
        emulator: device.emulator === true || device.serial.startsWith("emulator-"),
        locale: before.locale,
        timeoutMs: localeMs,
        log: (line) => options.log(`device ${device.serial}: put back ${line}`),
      });
      if (!back.ok) options.log(`device ${device.serial}: ${back.message}`);
    }
  };
}

async function readSetting(adb: Adb, key: string): Promise<string | undefined> {
  const read = await adb.shell(`settings get system ${key}`, commandMs);
  return read.ok ? read.lines.map((l) => l.trim()).find((l) => l !== "") : undefined;
}

/** The locale as device-locale.ts compares it: persist.sys.locale once chosen, else the build's own. */
async function readLocale(adb: Adb): Promise<string | undefined> {
  for (const property of ["persist.sys.locale", "ro.product.locale"]) {
    const read = await adb.shell(`getprop ${property}`, commandMs);
    if (!read.ok) return undefined;
    const value = read.lines.map((l) => l.trim()).find((l) => l !== "");
    if (value) return value;
  }
  return undefined;
}

async function putRotationBack(
  adb: Adb,
  rotation: { accelerometer: string; user: string },
  log: (message: string) => void,
): Promise<void> {
  const put = (key: string, value: string) =>
    value === unset ? `settings delete system ${key}` : `settings put system ${key} ${value}`;
  const done = await adb.shell(
    `${put("user_rotation", rotation.user)} && ${put("accelerometer_rotation", rotation.accelerometer)}`,
    commandMs,
  );
  if (!done.ok) {
    const why = done.lines.findLast((l) => l.trim() !== "") ?? `exit code ${done.exitCode}`;
    log(`device ${adb.serial}: putting its rotation back failed: ${why}`);
  }
}
