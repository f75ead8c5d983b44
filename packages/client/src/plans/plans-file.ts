import type { DeviceSpec, Step } from "../sdk/models.ts";

/** One plan of testbay.yaml: the body of POST /v1/testplans without `package_name`. */
export interface PlanEntry {
  name: string;
  devices?: DeviceSpec[];
  steps: Step[];
  timeout_seconds?: number;
  max_attempts?: number;
}

/** testbay.yaml: one app and its test plans, as kept in the app's repository. */
export interface PlansFile {
  app: string;
  plans: PlanEntry[];
}

/** What the server fills in for a field the file leaves out (API.md §5). */
export const planDefaults = { devices: [] as DeviceSpec[], timeout_seconds: 1800, max_attempts: 1 };

/** The fields apply compares and PATCHes: a plan's content, without its name (the key) or its app. */
export const planFields = ["devices", "steps", "timeout_seconds", "max_attempts"] as const;
export type PlanField = (typeof planFields)[number];

export type PlanContent = Pick<Required<PlanEntry>, PlanField>;

/** A plan's content with the server's defaults filled in, so that leaving a default out is no change. */
export function withDefaults(plan: Partial<PlanContent> & Pick<PlanEntry, "steps">): PlanContent {
  return {
    devices: plan.devices ?? planDefaults.devices,
    steps: plan.steps,
    timeout_seconds: plan.timeout_seconds ?? planDefaults.timeout_seconds,
    max_attempts: plan.max_attempts ?? planDefaults.max_attempts,
  };
}
