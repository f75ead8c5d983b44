/**
 * Readies an iOS device for a step's tests, the same for xcuitest and maestro (API.md §5 "What a device step
 * does"): the app unpacked from its IPA or zipped .app; a shut down simulator erased when the app's data is to
 * be cleared (quicker than booting it to remove one app); the simulator booted and waited for; the app
 * uninstalled (its data with it) when asked, then installed. A device that goes away on the way is an
 * infrastructure error (deviceLost), as on Android.
 */
import path from "node:path";
import { abortMessage } from "../steps/outcome.ts";
import type { StepContext, StepOutcome } from "../steps/step-types.ts";
import { IosDevice } from "./ios-device.ts";
import { unpackApp } from "./unpack.ts";
import { XcodeTools } from "./xcrun.ts";

/** The device ready, and the .app bundle unpacked from the version's IPA or zipped .app (what was installed). */
export type Prepared = { device: IosDevice; app: string } | { outcome: StepOutcome };

export async function prepareIosDevice(
  ctx: StepContext,
  tools: XcodeTools,
  options: { clearPackageData: boolean; what: string },
): Promise<Prepared> {
  const udid = ctx.device?.serial;
  if (ctx.device?.platform !== "ios" || udid === undefined) {
    return { outcome: errored(`${options.what} needs an iOS simulator or device`) };
  }
  if (ctx.binary.format !== "ipa" && ctx.binary.format !== "app") {
    return {
      outcome: errored(
        `${options.what} on iOS installs an .ipa or a zipped .app; this binary is an .${ctx.binary.format}`,
      ),
    };
  }
  const lost = (message: string): Prepared => ({
    outcome: { status: "errored", message: `device ${udid} was lost: ${message}`, deviceLost: true },
  });
  const cancelled = (): Prepared => ({ outcome: { status: "cancelled", message: abortMessage(ctx.signal) } });

  let app: string;
  try {
    const unpacked = await unpackApp(await ctx.appPath(), path.join(ctx.workDir, "app"), ctx.signal);
    if ("error" in unpacked) return { outcome: errored(unpacked.error) };
    app = unpacked.path;
  } catch (error) {
    return { outcome: errored(`could not fetch the app: ${(error as Error).message}`) };
  }
  if (ctx.signal.aborted) return cancelled();

  const device = await IosDevice.find(udid, tools, ctx.workDir);
  if (device === null) return lost("neither simctl nor devicectl lists it");
  let erased = false;
  if (
    options.clearPackageData &&
    device.kind === "simulator" &&
    (await device.simulatorState()) === "Shutdown"
  ) {
    const done = await device.erase();
    if (!done.ok) return done.lost ? lost(done.message) : { outcome: errored(done.message) };
    erased = true;
  }
  const booted = await device.boot();
  if (ctx.signal.aborted) return cancelled();
  if (!booted.ok) return booted.lost ? lost(booted.message) : { outcome: errored(booted.message) };
  if (options.clearPackageData && !erased) {
    const removed = await device.uninstall(ctx.packageName);
    if (!removed.ok) return removed.lost ? lost(removed.message) : { outcome: errored(removed.message) };
  }
  const installed = await device.install(app);
  if (ctx.signal.aborted) return cancelled();
  if (!installed.ok)
    return installed.lost ? lost(installed.message) : { outcome: errored(installed.message) };
  return { device, app };
}

function errored(message: string): StepOutcome {
  return { status: "errored", message };
}

/**
 * The maestro step on an iOS simulator: maestro's launchApp starts an installed app and installs nothing, so
 * the app goes on first. Maestro drives simulators only. Null when the simulator is ready, else the outcome.
 */
export async function prepareIosForMaestro(
  ctx: StepContext,
  clearPackageData: boolean,
): Promise<StepOutcome | null> {
  const tools = new XcodeTools({ workDir: ctx.workDir, signal: ctx.signal, log: ctx.log });
  const prepared = await prepareIosDevice(ctx, tools, { clearPackageData, what: "maestro" });
  if ("outcome" in prepared) return prepared.outcome;
  if (prepared.device.kind === "physical") return errored("maestro runs iOS flows on simulators only");
  return null;
}
