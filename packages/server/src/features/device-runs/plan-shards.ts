/**
 * What a plan's `shards` and `sharding` (API.md §5) mean for its device runs and steps. Pure: the trigger
 * asks how many device runs a device entry makes, the listing endpoint how a step's tests are split.
 *
 * Rule (issue 15's shared design, rule 1): a device entry makes N device runs, N the largest `shards` among
 * its steps; a step whose own shards k < N runs on shards 0..k-1 only; steps that do not split tests (inspect,
 * shell) run on shard 0 only, so that no result is counted twice.
 */
import type { ShardingMode } from "../../db/schema.ts";

/** Which shard of its device entry a device run is (the job's device_run.shard and shard_count). */
export interface RunShard {
  shard: number;
  shardCount: number;
}

/** The upper bound of a step's `shards` (testplans.schemas.ts). */
export const maxShards = 50;

/** The step types whose tests can be listed and split over shards. */
const splittable = new Set(["instrumentation", "xcuitest", "maestro"]);

/** A plan step as stored (only what sharding reads). */
export interface ShardableStep {
  type: string;
  /** "auto" only in a test plan: a trigger puts the number it chose in the execution's plan (API.md §13). */
  shards?: number | "auto";
  sharding?: ShardingMode;
}

/** A step's own shard count: its `shards` for a step that splits tests, else 1. */
export function stepShards(step: ShardableStep): number {
  if (!splittable.has(step.type)) return 1;
  const shards = step.shards ?? 1;
  return typeof shards === "number" && Number.isInteger(shards) && shards >= 1
    ? Math.min(shards, maxShards)
    : 1;
}

/** How many device runs each device entry of a plan with these steps makes (1 when nothing is sharded). */
export function shardCount(steps: readonly ShardableStep[]): number {
  return steps.reduce((count, step) => Math.max(count, stepShards(step)), 1);
}

/** Whether the step runs on this shard (rule 1). */
export function runsOnShard(step: ShardableStep, shard: number): boolean {
  return shard < stepShards(step);
}

/** How the step's listed tests are split (default duration). */
export function shardingOf(step: ShardableStep): ShardingMode {
  return step.sharding === "uniform" ? "uniform" : "duration";
}

/** Whether the step's tests can be listed for shard batches (instrumentation, xcuitest, maestro). */
export function splitsTests(step: ShardableStep): boolean {
  return splittable.has(step.type);
}
