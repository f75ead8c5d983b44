/**
 * Which step types this host can run, so the agent only claims work it can do: inspect needs nothing,
 * shell needs the operator's consent, instrumentation needs adb and an Android device, xcuitest Xcode's tools
 * (xcrun, xcodebuild) and an iOS simulator or device, maestro its CLI, appium (a WebDriver session relayed to
 * Appium, API.md §12) the operator's `--appium` and a device to hold the session.
 */
import type { Step } from "@testbay/client";
import type { Device } from "./step-types.ts";
import { which } from "./which.ts";

/**
 * The plan step types, and `appium`: the step of a session's device run, which the server makes from a new
 * WebDriver session and no test plan names (so it is not in the SDK's Step until the server's claim takes it).
 */
export type StepType = Step["type"] | "appium";

export interface HostFacts {
  /** The agent was started with shell steps allowed (they run arbitrary commands on the host). */
  allowShell: boolean;
  adbAvailable: boolean;
  maestroAvailable: boolean;
  /** xcrun and xcodebuild are on PATH (Xcode's command line tools, on a Mac). */
  xcodeAvailable: boolean;
  /** The agent was started with `--appium [PATH]` and found Appium (src/appium/appium-inventory.ts). */
  appiumAvailable?: boolean;
  devices: readonly Device[];
}

export function runnableStepTypes(facts: HostFacts): Set<StepType> {
  const types = new Set<StepType>(["inspect"]);
  if (facts.allowShell) types.add("shell");
  if (facts.adbAvailable && facts.devices.some((d) => d.platform === "android")) types.add("instrumentation");
  if (facts.xcodeAvailable && facts.devices.some((d) => d.platform === "ios")) {
    types.add("xcuitest");
  }
  if (facts.maestroAvailable) types.add("maestro");
  // A session holds one device; the driver for its platform is Appium's business (its APPIUM_HOME).
  if (facts.appiumAvailable && facts.devices.length > 0) types.add("appium");
  return types;
}

/** Looks for adb, maestro, xcrun and xcodebuild on PATH. */
export async function detectTools(
  pathEnv = process.env.PATH ?? "",
): Promise<{ adbAvailable: boolean; maestroAvailable: boolean; xcodeAvailable: boolean }> {
  const [adb, maestro, xcrun, xcodebuild] = await Promise.all(
    ["adb", "maestro", "xcrun", "xcodebuild"].map((tool) => which(tool, pathEnv)),
  );
  return {
    adbAvailable: adb !== null,
    maestroAvailable: maestro !== null,
    xcodeAvailable: xcrun !== null && xcodebuild !== null,
  };
}
