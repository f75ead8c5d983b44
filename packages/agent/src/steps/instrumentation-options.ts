/**
 * The instrumentation step's options of API.md §14 (issue 29), read from the plan's step. The SDK's
 * InstrumentationStep gains these fields with the server's schema; until every copy of it has them, they are
 * read through this one type so the rest of the agent names them once.
 */
import type { InstrumentationStep } from "@testbay/client";

export interface DeviceFileOptions {
  /** `-e KEY VALUE` each, after the filter (Flank's environment-variables). */
  environment?: Record<string, string>;
  /** Run through AndroidX Test Orchestrator: one instrumentation per test. */
  use_orchestrator?: boolean;
  /** Version file names installed before the app. */
  additional_apks?: string[];
  /** Version files pushed to absolute device paths before the run. */
  push?: Array<{ file: string; to: string }>;
  /** Absolute device paths pulled after the run, on every shard, also on failure. */
  pull?: string[];
  /** Regular expressions: only pulled files whose device path matches one are kept. */
  pull_filter?: string[];
  /** JaCoCo coverage files written on the device and kept as artifacts. */
  coverage?: boolean;
  /** `Class` or `Class#method`: run first on every shard, outside the sharded set. */
  always_run?: string[];
}

export type InstrumentationFilter = NonNullable<InstrumentationStep["filter"]> & {
  not_classes?: string[];
  not_packages?: string[];
};

export type FullInstrumentationStep = Omit<InstrumentationStep, "filter"> &
  DeviceFileOptions & { filter?: InstrumentationFilter };

/** The step with §14's options typed (they are optional: a plan without them reads as before). */
export function instrumentationOptions(step: InstrumentationStep): FullInstrumentationStep {
  return step as FullInstrumentationStep;
}
