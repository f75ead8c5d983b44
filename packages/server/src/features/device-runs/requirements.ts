import { type DeviceSelectors, meetsSelectors, selectorsOf } from "./device-selectors.ts";
import { osVersionMatches } from "./os-version-prefix.ts";
import type { AgentDevice } from "./types.ts";

/**
 * What a device run needs from the agent that claims it, stored on the run so a claim is one indexed query:
 * the plan's device entry (platform, and model / OS version when given) and the set of step types.
 */
export interface RunRequirements {
  platform: string | null;
  model: string | null;
  /** A plan's `os_version`: the device's, exactly (API.md §5). */
  osVersion: string | null;
  /** A session's `appium:platformVersion`: the start of the device's (os-version-prefix.ts, API.md §12). */
  osVersionPrefix: string | null;
  /** API.md §13's selectors of the entry (device-selectors.ts). */
  selectors: DeviceSelectors;
  /** Step types, sorted and comma-joined: "inspect,shell". */
  needs: string;
}

export function requirementsOf(
  plan: { steps: ReadonlyArray<{ type: string }> },
  device: Record<string, unknown> | null,
): RunRequirements {
  return {
    platform: typeof device?.platform === "string" ? device.platform : null,
    model: typeof device?.model === "string" ? device.model : null,
    osVersion: typeof device?.os_version === "string" ? device.os_version : null,
    osVersionPrefix: typeof device?.os_version_prefix === "string" ? device.os_version_prefix : null,
    selectors: selectorsOf(device),
    needs: stepTypeSet(plan.steps.map((step) => step.type)),
  };
}

/**
 * Whether a device is of the entry's platform, model and OS version (exact, or a session's prefix): the
 * JavaScript form of claim-query.ts's fitsDevice before the selectors, for the waiting reason and shards: "auto".
 */
export function fitsEntry(needs: RunRequirements, device: AgentDevice): boolean {
  return (
    device.platform === needs.platform &&
    (needs.model === null || device.model === needs.model) &&
    (needs.osVersion === null || device.os_version === needs.osVersion) &&
    (needs.osVersionPrefix === null || osVersionMatches(needs.osVersionPrefix, device.os_version))
  );
}

/** fitsEntry and every selector (device-selectors.ts): a device the claim would give the run to. */
export function deviceFits(needs: RunRequirements, device: AgentDevice): boolean {
  return fitsEntry(needs, device) && meetsSelectors(needs.selectors, device);
}

export function stepTypeSet(types: Iterable<string>): string {
  return [...new Set(types)].sort().join(",");
}

/**
 * Every non-empty subset of what an agent can run, in the stored form: a run whose `needs` is one of
 * them can run on that agent. Four step types make at most 15 subsets.
 *
 * @example runnableSets(["inspect", "shell"]) // ["inspect", "inspect,shell", "shell"]
 */
export function runnableSets(stepTypes: readonly string[]): string[] {
  const types = [...new Set(stepTypes)].sort();
  const sets: string[] = [];
  for (let mask = 1; mask < 1 << types.length; mask++) {
    sets.push(types.filter((_, bit) => mask & (1 << bit)).join(","));
  }
  return sets.sort();
}
