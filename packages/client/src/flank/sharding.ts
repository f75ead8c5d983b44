import type { ConversionContext } from "./conversion-context.ts";
import { flankSeconds } from "./flank-duration.ts";
import type { FlankInstrumentationStep } from "./flank-plan.ts";

type Sharding = Pick<FlankInstrumentationStep, "shards" | "sharding" | "max_shards" | "target_minutes">;

/** Testbay's most shards per step (API.md §5). */
const maxShards = 50;

/**
 * Flank's sharding keys → the step's: `flank.max-test-shards` → shards "auto" with max_shards (-1, one shard
 * per test in Flank, or more than 50: 50), `flank.shard-time` (seconds) → target_minutes,
 * `gcloud.num-uniform-shards` → that many uniform shards, `flank.disable-sharding` → one shard.
 */
export function shardingOf(context: ConversionContext): Sharding {
  const disable = context.flank("disable-sharding");
  const uniform = context.gcloud("num-uniform-shards");
  const max = context.flank("max-test-shards");
  const time = context.flank("shard-time");
  if (disable?.value === true) return { shards: 1 };

  if (uniform && uniform.value !== null) {
    const count = Number(uniform.value);
    if (!Number.isInteger(count) || count < 1 || count > maxShards) {
      context.error(
        uniform,
        `gcloud.num-uniform-shards ${JSON.stringify(uniform.value)}: a whole number from 1 to ${maxShards}`,
      );
      return {};
    }
    if (max && Number(max.value) > 1) {
      context.error(
        uniform,
        "gcloud.num-uniform-shards and flank.max-test-shards both set: Flank refuses the pair too; keep one",
      );
    }
    return { shards: count, sharding: "uniform" };
  }

  if (!max || max.value === null) return {};
  const count = Number(max.value);
  if (!Number.isInteger(count) || (count < 1 && count !== -1)) {
    context.error(
      max,
      `flank.max-test-shards ${JSON.stringify(max.value)}: a whole number, or -1 for as many as there are tests`,
    );
    return {};
  }
  if (count === 1) return {};
  const result: Sharding = {
    shards: "auto",
    max_shards: count === -1 ? maxShards : Math.min(count, maxShards),
  };
  if (count > maxShards)
    context.warn(
      max,
      `flank.max-test-shards ${count}: Testbay splits a step over at most ${maxShards} shards`,
    );
  if (time && time.value !== null) {
    const seconds = flankSeconds(time.value);
    if (seconds === undefined)
      context.error(time, `flank.shard-time ${JSON.stringify(time.value)}: seconds, e.g. 120`);
    else if (seconds > 0) result.target_minutes = Math.min(1440, Math.max(1, Math.round(seconds / 60)));
  }
  return result;
}
