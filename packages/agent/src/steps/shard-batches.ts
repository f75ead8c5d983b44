/**
 * Sharding as a device step sees it (API.md §5 `shards`, `sharding`; issue 15). A device entry with shards runs
 * as N device runs, one per shard, each on its own device. Which steps run on which shard (rule 1 of the
 * protocol) is decided here, and so is the loop a sharded step runs: its listing goes to the server, which
 * makes the plan once for all shards, then the step takes batch after batch of tests until none is left. A
 * shared queue (`duration`) means a device that finishes early takes more, and a device lost mid-batch has its
 * batch handed to the others by the server. Kept apart from adb so that the rules are tested against fakes.
 */
import type { ShardBatch, ShardTest, Step } from "@testbay/client";
import type { ShardContext, StepOutcome } from "./step-types.ts";

export type Sharding = "duration" | "uniform";

/** A step's own `shards` and `sharding` (1 and `duration` when absent; only device steps have them). */
export function stepSharding(step: Step): { shards: number; sharding: Sharding } {
  const options = step as { shards?: unknown; sharding?: unknown };
  const shards =
    typeof options.shards === "number" && Number.isInteger(options.shards) && options.shards >= 1
      ? options.shards
      : 1;
  return { shards, sharding: options.sharding === "uniform" ? "uniform" : "duration" };
}

/**
 * Step types whose tests are split over shards (a maestro step's tests are its flows: maestro-shards.ts). The
 * others would report the same results on every shard.
 */
const splitsTests = new Set<string>(["instrumentation", "xcuitest", "maestro"]);

/**
 * Rule 1: a step whose own `shards` k is below the device run's shard count runs on shards 0 … k-1 only, and
 * a step that does not split tests (inspect, shell) on shard 0 only, so that no result is counted twice.
 * Null when the step runs on this shard, else why not (for the step's log).
 */
export function skippedOnShard(step: Step, shard: Pick<ShardContext, "index" | "count"> | undefined) {
  if (shard === undefined || shard.count <= 1 || shard.index === 0) return null;
  if (!splitsTests.has(step.type)) return `${step.type} steps run on shard 0 only`;
  const { shards } = stepSharding(step);
  if (shard.index < shards) return null;
  return `this step has ${shards === 1 ? "no shards" : `${shards} shards`}; this device run is shard ${shard.index}`;
}

/** Whether the step takes its tests from the server batch by batch instead of running its whole listing. */
export function takesBatches(step: Step, shard: ShardContext | undefined): shard is ShardContext {
  return shard !== undefined && (shard.count > 1 || stepSharding(step).shards > 1);
}

/**
 * What running one batch came to: `ran` (its tests are reported; `last` when the step must take no more, as
 * when it ran out of time), or `stop` with the step's outcome (cancelled, device lost), which leaves the batch
 * held: the server hands it to another shard when this attempt ends.
 */
export type BatchRan = { ran: true; last?: boolean } | { stop: StepOutcome };

export interface BatchesDone {
  /** Why the loop stopped early; null when the queue was empty (or the step said `last`). */
  stopped: StepOutcome | null;
  batches: number;
  tests: number;
}

/**
 * Lists the step's tests to the server, then runs batch after batch with `runBatch`, reporting each one done
 * as it takes the next. A failed server call ends the step errored: the attempt's end hands its batch back.
 */
export async function runShardBatches(
  shard: ShardContext,
  listed: readonly ShardTest[],
  log: (line: string) => void,
  runBatch: (batch: ShardBatch) => Promise<BatchRan>,
): Promise<BatchesDone> {
  const done: BatchesDone = { stopped: null, batches: 0, tests: 0 };
  try {
    const plan = await shard.listTests(listed.map(({ classname, name }) => ({ classname, name })));
    const what = `${plan.tests} tests in ${plan.batches} batches (${plan.sharding})`;
    if (plan.planned) log(`shard ${shard.index + 1} of ${shard.count}: planned ${what}`);
    else log(`shard ${shard.index + 1} of ${shard.count}: the plan stands: ${what}`);
    // The plan stands even so: the shards must run one set of tests, whichever listed first.
    if (plan.differs) log("this device listed other tests than the plan was made of; running the plan's");
  } catch (error) {
    return { ...done, stopped: serverFailed("listing the tests to the server", error) };
  }
  let finished: string | undefined;
  for (;;) {
    let batch: ShardBatch | null;
    try {
      batch = await shard.nextBatch(finished);
    } catch (error) {
      return { ...done, stopped: serverFailed("taking the next batch of tests", error) };
    }
    if (batch === null) break;
    done.batches++;
    done.tests += batch.tests.length;
    log(`batch ${batch.id}: ${batch.tests.length} tests`);
    const ran = await runBatch(batch);
    if ("stop" in ran) return { ...done, stopped: ran.stop };
    finished = batch.id;
    if (ran.last) {
      // Its results are reported, so it must not run again elsewhere: mark it done, and take none (a batch
      // taken now would be held unrun until this attempt ends, and by then every other shard may be done).
      // A failed call is not the step's failure: the attempt's end marks a batch whose tests were all
      // reported done as well.
      await shard.nextBatch(finished, { take: false }).catch(() => {});
      return done;
    }
  }
  if (done.batches === 0) log("no batch was left for this shard: the other shards ran every test");
  return done;
}

function serverFailed(what: string, error: unknown): StepOutcome {
  return { status: "errored", message: `${what} failed: ${(error as Error).message}` };
}
