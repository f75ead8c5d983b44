/**
 * The device entry's locale and orientation (API.md §14), set before an Android device step installs anything
 * (android/device-locale.ts says how). Shared by the instrumentation and maestro steps. A device that went away
 * hands the run back; one that cannot take them (a phone in another locale) is an infrastructure error that
 * says so, not a failure of the app.
 */
import type { Adb } from "../android/adb.ts";
import { applyLocaleAndOrientation } from "../android/device-locale.ts";
import type { StepTime } from "./device-step.ts";
import { deviceLost, errored } from "./outcome.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

/** A settings change that takes longer than this is stuck (a framework restart is well under it). */
const settingsMs = 120_000;

export async function applyDeviceEntrySettings(
  ctx: StepContext,
  adb: Adb,
  time: StepTime,
): Promise<StepOutcome | null> {
  const settings = ctx.deviceSettings ?? {};
  if (settings.locale === undefined && settings.orientation === undefined) return null;
  const applied = await applyLocaleAndOrientation({
    adb,
    emulator: ctx.device?.emulator === true || adb.serial.startsWith("emulator-"),
    locale: settings.locale,
    orientation: settings.orientation,
    timeoutMs: Math.min(time.left(), settingsMs),
    log: (line) => ctx.log("agent", line),
  });
  if (applied.ok) return null;
  return applied.deviceLost
    ? deviceLost(adb.serial, applied.message)
    : errored(`infrastructure: ${applied.message}`);
}
