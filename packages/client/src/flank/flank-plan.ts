/**
 * The plan a flank file becomes: API.md §5's plan with §14's instrumentation fields (environment,
 * use_orchestrator, additional_apks, push, pull, pull_filter, coverage, always_run, filter.not_classes and
 * not_packages) and device entries' emulator, locale and orientation: the subset of the generated plan types
 * (sdk/models.ts) the converter writes, narrowed to an Android instrumentation plan.
 */
export interface FlankFilter {
  classes?: string[];
  not_classes?: string[];
  packages?: string[];
  not_packages?: string[];
  annotations?: string[];
  not_annotations?: string[];
  size?: "small" | "medium" | "large";
}

export interface FlankInstrumentationStep {
  type: "instrumentation";
  runner?: string;
  filter?: FlankFilter;
  environment?: Record<string, string>;
  use_orchestrator: boolean;
  additional_apks?: string[];
  push?: { file: string; to: string }[];
  pull?: string[];
  pull_filter?: string[];
  coverage?: boolean;
  always_run?: string[];
  clear_package_data?: boolean;
  record_video?: "never" | "on_failure" | "always";
  shards?: number | "auto";
  sharding?: "duration" | "uniform";
  max_shards?: number;
  target_minutes?: number;
  retry_failed_tests?: number;
}

export interface FlankDeviceEntry {
  platform: "android";
  model?: string;
  /** true for a Test Lab virtual device (test-lab-model.ts): any emulator. */
  emulator?: boolean;
  api_level_min?: number;
  api_level_max?: number;
  locale?: string;
  orientation?: "portrait" | "landscape";
}

export interface FlankPlan {
  name: string;
  devices: FlankDeviceEntry[];
  steps: [FlankInstrumentationStep];
  timeout_seconds?: number;
}

/** A local file the run uploads as a version file (other-files, additional-apks). */
export interface VersionFileSource {
  /** The version file's name (API.md §14: [A-Za-z0-9._-]{1,100}). */
  name: string;
  /** The path as the flank file writes it. */
  path: string;
  /** Where the file names it, for messages: `gcloud.additional-apks[0]`, `gcloud.other-files[/sdcard/a.json]`. */
  key: string;
}
