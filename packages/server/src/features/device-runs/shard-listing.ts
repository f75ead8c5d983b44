/**
 * What a sharded step's listing turns into (issue 15's shared design, rule 2), pure: the batches the first
 * listing plans (shard-plan.ts cuts them), and whether a later listing is the set the plan was made from.
 * shard-batches.ts stores and hands them out.
 */
import type { ShardingMode } from "../../db/schema.ts";
import { distinctTests, durationBatches, type ListedTest, testKey, uniformShards } from "./shard-plan.ts";

/** A batch as stored: its place in the step's queue, and the shard it is fixed to (null: any shard). */
export interface PlannedBatch {
  seq: number;
  shard: number | null;
  tests: ListedTest[];
  expectedMs: number;
}

export interface StepPlan {
  sharding: ShardingMode;
  /** The distinct tests, as first listed. */
  tests: ListedTest[];
  batches: PlannedBatch[];
}

/**
 * The plan of a step over its `shards` from its first listing. `uniform`: one batch per shard, fixed to it
 * (none for a shard with no tests: it finishes with nothing to run); `duration`: the shared queue, longest
 * tests first, `expectedMs` by testKey (the p80 of recent runs; tests not in it are expected to take 15 s).
 */
export function planStep(
  listed: readonly ListedTest[],
  shards: number,
  sharding: ShardingMode,
  expectedMs: ReadonlyMap<string, number>,
): StepPlan {
  const tests = distinctTests(listed);
  if (sharding === "uniform") {
    const batches = uniformShards(tests, shards)
      .map((list, shard) => ({ seq: shard, shard, tests: list, expectedMs: 0 }))
      .filter((batch) => batch.tests.length > 0);
    return { sharding, tests, batches };
  }
  const batches = durationBatches(tests, shards, expectedMs).map((batch, seq) => ({
    seq,
    shard: null,
    tests: batch.tests,
    expectedMs: Math.round(batch.expectedMs),
  }));
  return { sharding, tests, batches };
}

/** Whether a later listing names exactly the tests the plan was made from (order and repeats aside). */
export function sameTests(planned: readonly ListedTest[], listed: readonly ListedTest[]): boolean {
  const keys = new Set(planned.map(testKey));
  const again = distinctTests(listed);
  return again.length === keys.size && again.every((test) => keys.has(testKey(test)));
}
