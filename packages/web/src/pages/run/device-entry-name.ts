import type { DeviceRun } from "../../api/types.ts";
import { deviceEntries, shardLabel } from "./shards.ts";

const text = (value: unknown) => (typeof value === "string" && value ? value : undefined);

/**
 * "Pixel 8 · 14 · R5CT70XYZ1A": the device the run was on as the agent reported it, else what the plan asked. An
 * artifact names its device entry (`device` is the entry's position), not its shard: a sharded entry's files are
 * one group, named by what the plan asked and its shards ("Pixel 8 · 3 shards"); each file's name says its device.
 */
export function deviceEntryName(devices: readonly DeviceRun[], position: number): string {
  const entry = deviceEntries(devices)[position];
  const run = entry?.runs[0];
  const sharded = (entry?.runs.length ?? 0) > 1;
  const claimed = sharded ? undefined : run?.claimed_device;
  if (sharded) {
    return [
      text(run?.device?.model) ?? text(run?.device?.platform),
      text(run?.device?.os_version),
      `${entry?.runs.length} shards`,
    ]
      .filter(Boolean)
      .join(" · ");
  }
  const parts = claimed
    ? [text(claimed.model), text(claimed.os_version), text(claimed.serial)]
    : [text(run?.device?.model), text(run?.device?.os_version)];
  const named = parts.filter(Boolean).join(" · ");
  return named || (run?.device ? `device ${position + 1}` : "Agent host");
}

/**
 * "Pixel 8 · 14 · R5CT70XYZ2B · shard 2 of 3": one shard's device run, on the device its agent reported when that
 * is the attempt named (a later attempt may have run elsewhere), else what the plan asked; "· attempt 2" only past
 * the first, which is what almost every run has.
 */
export function shardRunName(
  devices: readonly DeviceRun[],
  position: number,
  shard: number,
  attempt: number,
): string {
  const entry = deviceEntries(devices)[position];
  const run = entry?.runs.find((one) => one.shard === shard);
  const claimed = run?.attempt === attempt ? run.claimed_device : undefined;
  const parts = claimed
    ? [text(claimed.model), text(claimed.os_version), text(claimed.serial)]
    : [text(run?.device?.model) ?? text(run?.device?.platform), text(run?.device?.os_version)];
  const named = parts.filter(Boolean).join(" · ") || `device ${position + 1}`;
  const ofShards = shardLabel(shard, entry?.runs.length)?.toLowerCase();
  return [named, ofShards, attempt > 1 ? `attempt ${attempt}` : undefined].filter(Boolean).join(" · ");
}
