/**
 * How a sharded step's listed tests are split over its shards (API.md §5 `shards`, `sharding`). Pure: the
 * protocol that asks for a plan and hands it to the agents lives beside it in this module.
 *
 * - `uniform`: exact lists, one per shard, split by count.
 * - `duration` (the default): batches for a queue the shards share, cut by each test's expected duration.
 */
import { percentile } from "../tests/test-history.ts";

/** A test as an agent lists it: for instrumentation the class and method, for maestro the flow. */
export interface ListedTest {
  classname: string;
  name: string;
}

/** One batch of the shared queue, in the order the shards are to take them. */
export interface TestBatch {
  tests: ListedTest[];
  /** The sum of its tests' expected durations. */
  expectedMs: number;
}

export interface DurationBatchOptions {
  /** Expected duration of a test with no history (API.md §5: 15 s). */
  unknownTestMs?: number;
  /**
   * What a batch costs beyond its tests: an `am instrument` (or maestro) start on a real device, ~1–3 s.
   * It sets how small the last batches may get. Fixed rather than learned from the plan's earlier batches:
   * the floor goes with its square root, so a wrong guess costs little (bench/README.md, shards: cut for 2 s
   * on devices taking 8 s per batch, 1.074 of the ideal; cut for the 8 s a planner would have measured, 1.071).
   */
  batchOverheadMs?: number;
  /** Each batch is at most the remaining work ÷ (factor × shards) (see `durationBatches`). */
  factor?: number;
}

export const UNKNOWN_TEST_MS = 15_000;
const defaults = { unknownTestMs: UNKNOWN_TEST_MS, batchOverheadMs: 2_000, factor: 2 };

/** The identity of a test within a step: the key of the expected durations `durationBatches` takes. */
export function testKey(test: ListedTest): string {
  // NUL cannot occur in a class or flow name, so two different tests never share a key.
  return `${test.classname}\u0000${test.name}`;
}

/**
 * The 80th percentile (nearest rank) of a test's recent durations, the duration `duration` sharding expects
 * of it; null without any. Shares `percentile` with the test history (GET /tests reports the same p80).
 */
export function p80(durationsMs: readonly number[]): number | null {
  return percentile(
    [...durationsMs].sort((a, b) => a - b),
    0.8,
  );
}

/**
 * The listed tests, each once, in the order first listed. A listing can name a test twice (parameterized
 * tests whose names collide, a runner that lists a class's inherited methods again): deduplicated rather than
 * refused, because running it once is what the step can do, and refusing would fail a run over the listing.
 */
export function distinctTests(tests: readonly ListedTest[]): ListedTest[] {
  const seen = new Set<string>();
  return tests.filter((test) => {
    const key = testKey(test);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function checkShards(shards: number): void {
  if (!Number.isInteger(shards) || shards < 1) {
    throw new RangeError(`shards must be a positive integer, got ${shards}`);
  }
}

/**
 * `uniform` sharding: exactly `shards` lists (some empty when there are fewer tests than shards), contiguous
 * runs of the listed order, sizes differing by at most one (the first lists take the remainder). Contiguous
 * rather than dealt round-robin so that a class's tests stay on one device and share its setup.
 *
 * @example uniformShards([a, b, c, d, e], 2) // [[a, b, c], [d, e]]
 */
export function uniformShards(tests: readonly ListedTest[], shards: number): ListedTest[][] {
  checkShards(shards);
  const distinct = distinctTests(tests);
  const base = Math.floor(distinct.length / shards);
  const larger = distinct.length % shards;
  const lists: ListedTest[][] = [];
  let start = 0;
  for (let shard = 0; shard < shards; shard++) {
    const size = base + (shard < larger ? 1 : 0);
    lists.push(distinct.slice(start, start + size));
    start += size;
  }
  return lists;
}

/**
 * `duration` sharding: the tests longest first (expected duration = `expectedMs` by `testKey`, the p80 of
 * recent runs; `unknownTestMs` for a test never seen), cut into batches for a queue all shards take from.
 *
 * Why this cut ("guided self-scheduling" in expected time, over a longest-first order):
 * - A shared queue already balances what estimates miss and what devices differ in: a device that finishes
 *   early takes the next batch. What is left to choose is the batch size. The last batches decide how far
 *   apart the shards end (at worst one batch), so they must be small; every batch costs a runner start
 *   (`batchOverheadMs`), so there must not be many.
 * - Each batch takes at most remaining ÷ (factor × shards) of the expected work. The first batches are large
 *   (with factor 2 and 4 shards, an eighth of the suite each, so even a device at half speed finishes its
 *   first batch before the others finish the rest), and they shrink geometrically: about
 *   factor × shards × ln(total ÷ floor) batches in all, not one per test.
 * - They stop shrinking at a floor of √(total × overhead ÷ shards): the batch size at which one more runner
 *   start costs a shard as much as the imbalance a smaller last batch would remove (for equal batches of
 *   size s the expected end is ≈ total/shards + (total/s)·overhead/shards + s, smallest at that s). Tests
 *   longer than the floor go alone, so the end of the queue is single short tests.
 * - Longest first (LPT) means the long tests start early and the tail is made of the shortest ones.
 *
 * Deterministic: ties in expected duration keep the listed order. Duplicates are dropped (`distinctTests`).
 */
export function durationBatches(
  tests: readonly ListedTest[],
  shards: number,
  expectedMs: ReadonlyMap<string, number>,
  options: DurationBatchOptions = {},
): TestBatch[] {
  checkShards(shards);
  const { unknownTestMs, batchOverheadMs, factor } = { ...defaults, ...options };
  const timed = distinctTests(tests)
    .map((test) => ({ test, ms: expectedMs.get(testKey(test)) ?? unknownTestMs }))
    // Array.prototype.sort is stable: equal durations stay in listed order.
    .sort((a, b) => b.ms - a.ms);
  let remaining = timed.reduce((sum, t) => sum + t.ms, 0);
  const floor = Math.sqrt((remaining * batchOverheadMs) / shards);

  const batches: TestBatch[] = [];
  let next = 0;
  while (next < timed.length) {
    const target = Math.max(remaining / (factor * shards), floor);
    // biome-ignore lint/style/noNonNullAssertion: next < timed.length
    const first = timed[next++]!;
    const batch: TestBatch = { tests: [first.test], expectedMs: first.ms };
    for (let candidate = timed[next]; candidate !== undefined; candidate = timed[next]) {
      if (batch.expectedMs + candidate.ms > target) break;
      batch.tests.push(candidate.test);
      batch.expectedMs += candidate.ms;
      next++;
    }
    remaining -= batch.expectedMs;
    batches.push(batch);
  }
  return batches;
}
