import type { TestCase } from "../../api/types.ts";
import { shardLabel } from "./shards.ts";

/**
 * Which device a test ran on, as short as it can be said: "Pixel 8 · 14", or the device run's position; with its
 * shard when the entry was sharded ("Pixel 8 · 14 · shard 2 of 3"), since each shard ran on a device of its own.
 * `shardCounts` is the run's shards per device entry (shards.ts), when the run is loaded.
 */
export function deviceLabel(test: TestCase, shardCounts?: readonly number[]): string {
  const { model, os_version, serial, position } = test.device;
  const named = [model ?? serial, os_version].filter(Boolean).join(" · ") || `device ${position + 1}`;
  const shard = shardLabel(test.shard, shardCounts?.[position]);
  return shard ? `${named} · ${shard.toLowerCase()}` : named;
}
