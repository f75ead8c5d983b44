// Pure helpers of the claim benchmark: what the agents were handed out, checked against what was queued.
import { percentile } from "./stats.ts";

export interface HandedOut {
  /** Handed-out ids, each counted once however often it came. */
  distinct: number;
  /** Handed-out ids beyond the first of each: 0 when every claim was exclusive. */
  duplicates: number;
  /** Ids handed out more than once, with how often (the first few only). */
  repeated: Array<{ id: string; times: number }>;
}

/** Counts duplicates among ids handed out by claims: an id that comes twice was claimed twice. */
export function countDuplicates(ids: Iterable<string>, keep = 10): HandedOut {
  const seen = new Map<string, number>();
  let total = 0;
  for (const id of ids) {
    total++;
    seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  const repeated: HandedOut["repeated"] = [];
  for (const [id, times] of seen) {
    if (times > 1 && repeated.length < keep) repeated.push({ id, times });
  }
  return { distinct: seen.size, duplicates: total - seen.size, repeated };
}

/** How the ids handed out compare with the ids that were queued. */
export function compareSets(
  expected: Iterable<string>,
  got: Iterable<string>,
): { missing: number; unexpected: number } {
  const want = new Set(expected);
  const have = new Set(got);
  let missing = 0;
  for (const id of want) if (!have.has(id)) missing++;
  let unexpected = 0;
  for (const id of have) if (!want.has(id)) unexpected++;
  return { missing, unexpected };
}

/**
 * p50 and p99 of the first and the last `fraction` of a series of times, in the order they were taken: in a
 * drain, the claims made while the queue was full against those made while it was nearly empty.
 */
export function headAndTail(
  times: readonly number[],
  fraction: number,
): { head: { p50: number; p99: number }; tail: { p50: number; p99: number } } {
  const n = Math.max(1, Math.floor(times.length * fraction));
  const stats = (slice: readonly number[]) => {
    const sorted = Float64Array.from(slice).sort();
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  };
  return { head: stats(times.slice(0, n)), tail: stats(times.slice(-n)) };
}

/** Events per second over a wall time in ms; NaN when no time passed. */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : Number.NaN;
}
