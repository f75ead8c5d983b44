/**
 * The prepare stage both Android steps share (instrumentation-step.ts, maestro-step.ts): install the APKs in
 * order, then clear the app's data when the step asks (`pm clear`, which needs the app installed). An install
 * or a clear that failed because adb lost the device is a lost device (the run is handed back), not an error
 * of the app.
 */
import type { Adb } from "../android/adb.ts";
import { installApk } from "../android/install-apk.ts";
import { cancelled, deviceLost, errored } from "./outcome.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

/** A `pm clear` that takes longer than this is stuck. */
const clearMs = 120_000;

/** Null when the device is ready, else the step's outcome. */
export async function installOnAndroid(
  adb: Adb,
  ctx: StepContext,
  options: { apks: readonly string[]; clearData: boolean; left(): number },
): Promise<StepOutcome | null> {
  for (const apk of options.apks) {
    const installed = await installApk(adb, apk, options.left());
    if (ctx.signal.aborted) return cancelled(ctx.signal);
    if (!installed.ok) {
      return installed.deviceLost ? deviceLost(adb.serial, installed.message) : errored(installed.message);
    }
  }
  if (options.clearData) {
    const cleared = await adb.shell(`pm clear ${ctx.packageName}`, clearMs);
    if (!cleared.ok) {
      const why = `pm clear ${ctx.packageName} failed: ${cleared.lines.at(-1) ?? cleared.exitCode}`;
      return cleared.deviceLost || !(await adb.present()) ? deviceLost(adb.serial, why) : errored(why);
    }
  }
  return null;
}
