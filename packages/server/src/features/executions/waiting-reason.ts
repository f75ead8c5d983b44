import {
  type AgentDevice,
  admits,
  type DeviceSelectors,
  fitsEntry,
  isInService,
  meetsSelectors,
  osVersionPrefixShown,
  requirementsOf,
  runsOnShard,
  type ShardableStep,
  setSelectors,
  versionKey,
} from "../device-runs/index.ts";
import type { ExecutionRecord } from "./executions.repo.ts";

/** What an online agent can do, as its last claim said: its step types and its devices (free or busy). */
export interface CapableAgent {
  stepTypes: readonly string[];
  devices: readonly AgentDevice[];
}

export interface WaitingReason {
  code: "no_capable_agent" | "org_limit";
  detail: string;
}

/** What each step type needs from the agent, said as the way to get one. */
const howToOffer: Record<string, string> = {
  shell: "start one with --allow-shell",
  instrumentation: "start one on a host with adb and a connected Android device",
  xcuitest: "start one on a Mac with Xcode (xcrun, xcodebuild) and an iOS simulator or device",
  maestro: "start one on a host with the maestro CLI on its PATH",
  inspect: "start one with testbay-agent",
  appium:
    "start one with --appium on a host with Appium and the session's driver (npm install -g appium, then appium driver install uiautomator2 or xcuitest)",
};

/**
 * Why a queued execution waits when no online agent could take any of its queued device runs, or when its
 * organization runs as many device runs as its limit allows (`limit`, API.md §15); null when one could take
 * it and nothing holds it back (it waits only for a free agent or device), or when the execution is not queued.
 */
export function waitingReason(
  execution: ExecutionRecord,
  online: readonly CapableAgent[],
  limit: { max: number; running: number } | null = null,
): WaitingReason | null {
  if (execution.status !== "queued") return null;
  const plan = execution.plan as { steps?: ShardableStep[] };
  const queued = execution.deviceRuns.filter((run) => run.status === "queued");
  if (queued.length === 0) return null;
  // Each run needs what its shard runs, as stored for claims (executions.repo.ts).
  const reasons = queued.map((run) => {
    const steps = (plan.steps ?? []).filter((step) => runsOnShard(step, run.shard ?? 0));
    return blocker(requirementsOf({ steps }, run.device), online);
  });
  if (reasons.some((reason) => reason === null)) {
    if (limit === null || limit.running < limit.max) return null;
    return {
      code: "org_limit",
      detail: `the organization runs ${limit.running} device runs, as many as its limit allows (${limit.max}): this one starts when one of them ends (testbay-server org set-limits changes the limit)`,
    };
  }
  return { code: "no_capable_agent", detail: reasons[0] as string };
}

/** Why no online agent can take a run with these requirements; null when one can. */
function blocker(needs: ReturnType<typeof requirementsOf>, online: readonly CapableAgent[]): string | null {
  if (online.length === 0)
    return "no agent is online: start testbay-agent with this organization's agent client";
  const stepTypes = needs.needs === "" ? [] : needs.needs.split(",");
  const missing = stepTypes.find((type) => !online.some((agent) => agent.stepTypes.includes(type)));
  if (missing !== undefined) {
    return `no agent offers step type ${missing}: ${howToOffer[missing] ?? "start an agent that can run it"}`;
  }
  const able = online.filter((agent) => stepTypes.every((type) => agent.stepTypes.includes(type)));
  if (able.length === 0) {
    return `no single agent offers step types ${stepTypes.join(", ")} together: start one that runs them all`;
  }
  if (needs.platform === null) return null;
  // Failed and drained devices take no runs until their agent mends them; the others free up in time.
  const devices = able.flatMap((agent) => agent.devices).filter(isInService);
  const wanted = [
    needs.model === null ? null : `model ${needs.model}`,
    needs.osVersion === null ? null : `OS version ${needs.osVersion}`,
    needs.osVersionPrefix === null ? null : `OS version ${osVersionPrefixShown(needs.osVersionPrefix)}`,
  ].filter((part) => part !== null);
  // As the claim matches them (device-runs/claim-query.ts; the selectors by device-runs/device-selectors.ts).
  const entryDevices = devices.filter((device) => fitsEntry(needs, device));
  if (entryDevices.some((device) => meetsSelectors(needs.selectors, device))) return null;
  if (wanted.length === 0 && entryDevices.length === 0) {
    return `no ${needs.platform} device is connected to an agent that can run this plan: connect one, or change the plan's devices`;
  }
  if (entryDevices.length === 0) {
    return `no ${needs.platform} device matches ${wanted.join(" and ")}: connect one to an agent, or change the plan's devices`;
  }
  return selectorBlocker(needs.platform, [...wanted], needs.selectors, entryDevices);
}

/**
 * The entry's devices are online but its selectors (API.md §13) admit none: name the selector none of them
 * meets, with what the online ones have ("no android device matches api_level ≥ 35 (online: 33, 34)"), or the
 * selectors together when each is met by some device but no device meets them all.
 */
function selectorBlocker(
  platform: string,
  wanted: string[],
  selectors: DeviceSelectors,
  devices: readonly AgentDevice[],
): string {
  const rules = setSelectors(selectors);
  const unmet = rules.find((rule) => !devices.some((device) => admits(rule, selectors, device)));
  const fix = "start an agent with such a device, or change the plan's devices";
  if (unmet !== undefined) {
    const has = [...new Set(devices.map((device) => unmet.has(device)))].sort(byVersion);
    const shown = has.length > 8 ? [...has.slice(0, 8), `${has.length - 8} more`] : has;
    return `no ${platform} device matches ${[...wanted, unmet.asked(selectors)].join(" and ")} (online: ${shown.join(", ")}): ${fix}`;
  }
  return `no ${platform} device matches ${[...wanted, ...rules.map((rule) => rule.asked(selectors))].join(" and ")} together (each is met by some device online, none meets them all): ${fix}`;
}

/** Numbers and versions in their order, other values after them by name. */
function byVersion(a: string, b: string): number {
  const [ka, kb] = [versionKey(a), versionKey(b)];
  if (ka !== null && kb !== null) return ka < kb ? -1 : ka > kb ? 1 : 0;
  if (ka !== null) return -1;
  if (kb !== null) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
