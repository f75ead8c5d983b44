import type { TestPlan } from "../../api/types.ts";

type Step = TestPlan["steps"][number];

/** A device option of a step, when it has it (only device steps do, API.md §5). */
const option = (step: Step, key: string): unknown =>
  key in step ? (step as Record<string, unknown>)[key] : undefined;

/**
 * How a step spreads over devices and retries its failures, in words: "3 shards by duration, failed tests retried
 * up to 2 times"; empty when it does neither (one shard, no retries).
 */
export function spreadSummary(step: Step): string {
  const shards = option(step, "shards");
  const retries = option(step, "retry_failed_tests");
  const parts: string[] = [];
  if (typeof shards === "number" && shards > 1) {
    const sharding = option(step, "sharding");
    parts.push(`${shards} shards by ${sharding === "uniform" ? "count" : "duration"}`);
  }
  if (typeof retries === "number" && retries > 0) {
    parts.push(`failed tests retried up to ${retries === 1 ? "once" : `${retries} times`}`);
  }
  return parts.join(", ");
}

/** One step in a few words: its name if it has one, else its type, and how it spreads over devices. */
export function stepSummary(step: Step): string {
  const named = "name" in step && typeof step.name === "string" && step.name !== "" ? step.name : undefined;
  const label = named ? `${named} (${step.type})` : step.type;
  const spread = spreadSummary(step);
  return spread ? `${label}: ${spread}` : label;
}

/** The plan's steps, in order, for a list row. */
export function stepsSummary(steps: readonly Step[]): string {
  return steps.length === 0 ? "no steps" : steps.map(stepSummary).join(" → ");
}

/** The plan's devices for a list row: "agent host" when it has none. */
export function devicesSummary(devices: TestPlan["devices"]): string {
  if (devices.length === 0) return "agent host";
  return devices
    .map((device) => [device.model ?? device.platform, device.os_version].filter(Boolean).join(" "))
    .join(", ");
}
