/**
 * Applying `shards: "auto"` at trigger (API.md §13): for each device entry, how many device runs its tests fit in,
 * from the plan's history and the devices online (auto-shards.ts decides), and the plan as the execution keeps it,
 * with each "auto" replaced by a number, since agents and the shard rules (device-runs/plan-shards.ts) read numbers.
 */
import {
  deviceFits,
  isInService,
  requirementsOf,
  type ShardableStep,
  shardCount,
  splitsTests,
} from "../device-runs/index.ts";
import type { CapableAgent } from "../executions/index.ts";
import { autoShards, defaultMaxShards, defaultTargetMinutes, type ShardsPlanned } from "./auto-shards.ts";

/** What the decision reads, fetched only for plans that ask for it. */
export interface ShardFactsSource {
  /** The sum of the plan's tests' p80 durations in ms; null when it has no history. */
  testsMs(organizationId: string, testPlanId: string): Promise<number | null>;
  /** The organization's online agents, as the waiting reason sees them. */
  onlineAgents(organizationId: string): Promise<CapableAgent[]>;
}

type AutoStep = ShardableStep & { target_minutes?: number; max_shards?: number };

export interface EntryShards {
  /** Device runs the entry makes. */
  count: number;
  /** Present when an auto step chose the count's part. */
  planned?: ShardsPlanned;
}

export interface ShardedPlan<Step> {
  /** The steps with every "auto" replaced by the most shards it chose over the entries. */
  steps: Step[];
  /** By device entry position ([null] for a plan without devices). */
  entries: EntryShards[];
}

export function hasAutoShards(steps: readonly ShardableStep[]): boolean {
  return steps.some((step) => step.shards === "auto" && splitsTests(step));
}

/**
 * The runs of each entry: the fixed shards as before (the largest among the steps), or what an auto step chose
 * when that is more. `facts` is read only when a step asks for "auto".
 */
export async function planShards<Step extends ShardableStep>(
  steps: readonly Step[],
  devices: ReadonlyArray<Record<string, unknown> | null>,
  facts: () => Promise<{ testsMs: number | null; online: readonly CapableAgent[] }>,
): Promise<ShardedPlan<Step>> {
  const fixed = shardCount(steps.map((step) => (step.shards === "auto" ? { ...step, shards: 1 } : step)));
  if (!hasAutoShards(steps)) return { steps: [...steps], entries: devices.map(() => ({ count: fixed })) };
  const { testsMs, online } = await facts();
  // A shard past the first runs only the steps that split tests: the agents and devices that can take it.
  const needs = devices.map((device) => requirementsOf({ steps: steps.filter(splitsTests) }, device));
  const matching = needs.map((need) => {
    const types = need.needs === "" ? [] : need.needs.split(",");
    const able = online.filter((agent) => types.every((type) => agent.stepTypes.includes(type)));
    if (need.platform === null) return able.length;
    return able
      .flatMap((agent) => agent.devices)
      .filter((device) => isInService(device) && deviceFits(need, device)).length;
  });
  const chosen = steps.map((step) =>
    step.shards === "auto" && splitsTests(step)
      ? matching.map((matchingDevicesOnline) =>
          autoShards({
            testsMs,
            targetMinutes: (step as AutoStep).target_minutes ?? defaultTargetMinutes,
            maxShards: (step as AutoStep).max_shards ?? defaultMaxShards,
            matchingDevicesOnline,
          }),
        )
      : null,
  );
  const entries = devices.map((_, position) => {
    const planned = chosen
      .map((perEntry) => perEntry?.[position])
      .filter((p): p is ShardsPlanned => p !== undefined)
      .reduce<ShardsPlanned | undefined>((most, p) => (most && most.count >= p.count ? most : p), undefined);
    return { count: Math.max(fixed, planned?.count ?? 1), ...(planned ? { planned } : {}) };
  });
  return {
    steps: steps.map((step, index) => {
      const perEntry = chosen[index];
      return perEntry ? { ...step, shards: Math.max(...perEntry.map((p) => p.count)) } : step;
    }),
    entries,
  };
}
