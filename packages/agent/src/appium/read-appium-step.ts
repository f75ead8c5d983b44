/**
 * Reads a job's `appium` step (`plan.steps[0]` of a session's device run: `{type: "appium", capabilities,
 * options}`, docs/appium-relay.md step 1). The SDK's Step type does not list it (no test plan names one), so what
 * the server sent is checked here rather than cast: a malformed step fails the session with why, not the agent.
 */
import type { AppiumStep, AppiumStepOptions } from "./appium-step.ts";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function positiveSeconds(options: Record<string, unknown>, key: keyof AppiumStepOptions): number | undefined {
  const value = options[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new Error(`the appium step's options.${key} is not a positive number of seconds`);
  }
  return value;
}

/** The step, or throws with what is wrong with it. */
export function readAppiumStep(step: unknown): AppiumStep {
  if (!isObject(step) || step.type !== "appium")
    throw new Error("the job's first step is not an appium step");
  if (!isObject(step.capabilities)) throw new Error("the appium step has no capabilities object");
  const options = step.options === undefined || step.options === null ? {} : step.options;
  if (!isObject(options)) throw new Error("the appium step's options are not an object");
  const read: AppiumStepOptions = {};
  const idle = positiveSeconds(options, "idle_timeout_seconds");
  const max = positiveSeconds(options, "max_duration_seconds");
  if (idle !== undefined) read.idle_timeout_seconds = idle;
  if (max !== undefined) read.max_duration_seconds = max;
  if (typeof options.record_video === "boolean") read.record_video = options.record_video;
  return { type: "appium", capabilities: { ...step.capabilities }, options: read };
}
