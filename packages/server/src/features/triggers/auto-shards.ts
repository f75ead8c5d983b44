/**
 * `shards: "auto"` (API.md §13 "Shards that fit a time budget"): how many device runs a device entry gets, decided
 * at trigger from the plan's history and the devices online. Pure, so the rule and its reason are tested alone
 * (auto-shards.test.ts); triggers.service.ts gathers the facts.
 */

/** target_minutes and max_shards when a step does not say (API.md §13). */
export const defaultTargetMinutes = 10;
export const defaultMaxShards = 10;

export interface AutoShardFacts {
  /** The sum of the plan's tests' p80 durations (ms), as GET /v1/tests reports them; null: no history yet. */
  testsMs: number | null;
  targetMinutes: number;
  maxShards: number;
  /** Devices online that the entry's runs could go to (device-runs deviceFits, failed and drained left out). */
  matchingDevicesOnline: number;
}

/** What a device run says of it: `shards_planned`. */
export interface ShardsPlanned {
  count: number;
  reason: string;
}

/**
 * The tests' time ÷ target_minutes, rounded up (at least 1); max_shards without history; then capped by
 * max_shards and by the matching devices online, since a shard with no device would only wait. No device online
 * still makes one run, which waits for one (its waiting_reason says so).
 *
 * @example autoShards({ testsMs: 19 * 60_000, targetMinutes: 5, maxShards: 10, matchingDevicesOnline: 3 })
 * // { count: 3, reason: "19 min of tests ÷ 5 min = 4 shards; 3 matching devices online → 3" }
 */
export function autoShards(facts: AutoShardFacts): ShardsPlanned {
  const steps: string[] = [];
  let count: number;
  if (facts.testsMs === null) {
    count = facts.maxShards;
    steps.push(`no test history for this plan yet: max_shards ${facts.maxShards}`);
  } else {
    const wanted = Math.max(1, Math.ceil(facts.testsMs / (facts.targetMinutes * 60_000)));
    steps.push(
      `${minutes(facts.testsMs)} of tests ÷ ${facts.targetMinutes} min = ${wanted} ${wanted === 1 ? "shard" : "shards"}`,
    );
    count = wanted;
    if (count > facts.maxShards) {
      count = facts.maxShards;
      steps.push(`max_shards ${facts.maxShards} → ${count}`);
    }
  }
  const online = facts.matchingDevicesOnline;
  const devices =
    online === 0
      ? "no matching device online"
      : `${online} matching ${online === 1 ? "device" : "devices"} online`;
  const capped = Math.max(1, Math.min(count, online));
  steps.push(capped < count ? `${devices} → ${capped}` : devices);
  return { count: capped, reason: steps.join("; ") };
}

/** "19 min", "2.5 min", "40 s": as precise as a reason needs. */
function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const min = ms / 60_000;
  return min >= 10 || Number.isInteger(min) ? `${Math.round(min)} min` : `${min.toFixed(1)} min`;
}
