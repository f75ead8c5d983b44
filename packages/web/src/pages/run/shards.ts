import type { DeviceRun } from "../../api/types.ts";

/** One device entry of the plan with its device runs, one per shard (a single one when it is not sharded). */
export interface DeviceEntry {
  /** The entry's position in the plan's devices: what tests and artifacts call `device`. */
  position: number;
  runs: DeviceRun[];
}

/**
 * The execution's device runs grouped by the plan's device entry. The API lists them by entry and then by shard
 * without saying the entry (API.md §6 devices[]), and every entry has a shard 0: a run of shard 0 starts the next
 * entry. Each shard is a device run of its own, so the size of a group is the entry's shard count.
 */
export function deviceEntries(devices: readonly DeviceRun[]): DeviceEntry[] {
  const entries: DeviceEntry[] = [];
  for (const run of devices) {
    const last = entries.at(-1);
    if (last && run.shard > 0) last.runs.push(run);
    else entries.push({ position: entries.length, runs: [run] });
  }
  return entries;
}

/** How many shards each device entry has, by its position (what a test's `device.position` names). */
export const shardCounts = (devices: readonly DeviceRun[]): number[] =>
  deviceEntries(devices).map((entry) => entry.runs.length);

/**
 * "Shard 2 of 3" (people count from 1, the API from 0); undefined when the entry is not sharded. A shard past the
 * count known (the run still loading) is named without it.
 */
export function shardLabel(shard: number, count: number | undefined): string | undefined {
  if (shard === 0 && (count ?? 1) <= 1) return undefined;
  return count !== undefined && shard < count ? `Shard ${shard + 1} of ${count}` : `Shard ${shard + 1}`;
}
