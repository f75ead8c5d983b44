/**
 * Which step types this host can run, so the agent only claims work it can do: inspect needs nothing,
 * shell needs the operator's consent, instrumentation needs adb and an Android device, maestro its CLI.
 */
import type { Step } from "@testbay/client";
import type { Device } from "./step-types.ts";
import { which } from "./which.ts";

export type StepType = Step["type"];

export interface HostFacts {
  /** The agent was started with shell steps allowed (they run arbitrary commands on the host). */
  allowShell: boolean;
  adbAvailable: boolean;
  maestroAvailable: boolean;
  devices: readonly Device[];
}

export function runnableStepTypes(facts: HostFacts): Set<StepType> {
  const types = new Set<StepType>(["inspect"]);
  if (facts.allowShell) types.add("shell");
  if (facts.adbAvailable && facts.devices.some((d) => d.platform === "android")) types.add("instrumentation");
  if (facts.maestroAvailable) types.add("maestro");
  return types;
}

/** Looks for adb and maestro on PATH. */
export async function detectTools(
  pathEnv = process.env.PATH ?? "",
): Promise<{ adbAvailable: boolean; maestroAvailable: boolean }> {
  const [adb, maestro] = await Promise.all([which("adb", pathEnv), which("maestro", pathEnv)]);
  return { adbAvailable: adb !== null, maestroAvailable: maestro !== null };
}
