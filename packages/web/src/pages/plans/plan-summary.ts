import type { TestPlan } from "../../api/types.ts";

type Step = TestPlan["steps"][number];

/** One step in a few words: its name if it has one, else its type, and how it spreads over devices. */
export function stepSummary(step: Step): string {
  const named = "name" in step && typeof step.name === "string" && step.name !== "" ? step.name : undefined;
  const label = named ? `${named} (${step.type})` : step.type;
  const shards = "shards" in step && typeof step.shards === "number" && step.shards > 1 ? step.shards : 0;
  return shards ? `${label} ×${shards} shards` : label;
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
