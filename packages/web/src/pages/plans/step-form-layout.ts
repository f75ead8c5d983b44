// How the plan form shows each step type: what the OpenAPI document cannot say. The fields themselves (which a
// step takes, their types, choices and bounds) are step-schemas.generated.ts, made by `npm run openapi` from the
// server's step schemas; this file names a field by its path there and gives it a label, a place (order and
// group), help, and the words for its default. A path the schemas do not have fails the type check, and a field
// of the schemas that is neither shown nor in `leftOut` fails step-form-layout.test.ts: a field added to a step
// in the server shows up here or fails a test, never drifts silently.
import type { stepSchemas } from "./step-schemas.generated.ts";

type SchemaStepType = keyof typeof stepSchemas;
/** A field of a step type's schema, by its dotted path ("expect.min_sdk_at_most"). */
export type SchemaPath<T extends SchemaStepType> = keyof (typeof stepSchemas)[T]["properties"] & string;

/** The bounds the schema gives a number, for help that says them. */
export interface Bounds {
  minimum?: number;
  maximum?: number;
}

export interface FieldLayout<Path extends string = string> {
  path: Path;
  label: string;
  /** Help under the input; a function is given the field's bounds from the schema, so the help cannot drift. */
  help?: string | ((bounds: Bounds) => string);
  /** What the API does when the field is left out, for booleans and choices ("yes", "on_failure"). */
  default?: string;
  /** The group of fields it is shown in ("Expect", "Filter", "Device options"). */
  group?: string;
  /** A string edited over several lines (a shell command), or a list edited one textarea per item (flows). */
  input?: "multiline" | "texts";
}

export interface StepLayout<T extends SchemaStepType> {
  summary: string;
  /** The fields the form shows, in order. */
  fields: FieldLayout<SchemaPath<T>>[];
  /** Fields of the schema the form has no input for, on purpose: a step that sets one is edited as JSON. */
  leftOut: SchemaPath<T>[];
}

const name = { path: "name", label: "Step title", help: "Optional: the step's name in results." } as const;
const timeout: FieldLayout<"timeout_seconds"> = {
  path: "timeout_seconds",
  label: "Step timeout (seconds)",
  help: ({ minimum, maximum = 0 }) => `Optional; ${minimum} s to ${maximum / 3600} h.`,
};
type DeviceOption =
  | "shards"
  | "sharding"
  | "retry_failed_tests"
  | "record_video"
  | "logcat"
  | "screenshot_on_failure"
  | "clear_package_data";
const deviceOptions: FieldLayout<DeviceOption>[] = [
  {
    path: "shards",
    label: "Shards",
    help: ({ minimum, maximum }) =>
      `${minimum}–${maximum}: the tests split over that many devices matching each device entry. Default 1.`,
    group: "Shards and retries",
  },
  {
    path: "sharding",
    label: "Split by",
    default: "duration",
    help: "duration balances by each test's recent time; uniform by count.",
    group: "Shards and retries",
  },
  {
    path: "retry_failed_tests",
    label: "Retry failed tests",
    help: ({ minimum, maximum }) =>
      `${minimum}–${maximum}: a failed test reruns alone up to that many times; passing then makes it flaky. Default 0.`,
    group: "Shards and retries",
  },
  { path: "record_video", label: "Record video", default: "on_failure", group: "Device options" },
  { path: "logcat", label: "Capture logcat", default: "yes", group: "Device options" },
  { path: "screenshot_on_failure", label: "Screenshot on failure", default: "yes", group: "Device options" },
  {
    path: "clear_package_data",
    label: "Clear app data first",
    default: "no",
    help: "pm clear before the tests run.",
    group: "Device options",
  },
];
/** The same options on iOS, said as they happen there: the device log, and uninstalling rather than pm clear. */
/**
 * shards: "auto"'s budget (API.md §13): the form's Shards input takes a number only, so a step that asks for "auto"
 * with these is edited as JSON.
 */
const autoShardsOptions = ["target_minutes", "max_shards"] as const;

const iosDeviceOptions = deviceOptions.map((field): FieldLayout<DeviceOption> => {
  if (field.path === "logcat") return { ...field, label: "Capture the device log" };
  if (field.path === "clear_package_data") {
    return { ...field, help: "Uninstall the app (a shut-down simulator: erase it) before the tests run." };
  }
  return field;
});
const whichTests = <Path extends string>(path: Path, label: string, help: string): FieldLayout<Path> => ({
  path,
  label,
  help,
  group: "Which tests run",
});

/** Each step type the form edits, in the order its "Type of the new step" lists them. */
export const stepLayouts: { [T in SchemaStepType]: StepLayout<T> } = {
  inspect: {
    summary: "Checks the uploaded binary's metadata; needs no device.",
    fields: [
      name,
      { path: "expect.max_size_mb", label: "Max size (MB)", group: "Expect" },
      { path: "expect.min_sdk_at_most", label: "Min SDK at most", group: "Expect" },
      { path: "expect.target_sdk_at_least", label: "Target SDK at least", group: "Expect" },
      {
        path: "expect.abis_include",
        label: "ABIs included",
        help: "One a line, e.g. arm64-v8a.",
        group: "Expect",
      },
      {
        path: "expect.permissions_exclude",
        label: "Permissions not requested",
        help: "One a line, e.g. android.permission.READ_SMS.",
        group: "Expect",
      },
      { path: "expect.debuggable", label: "Debuggable", default: "not checked", group: "Expect" },
    ],
    leftOut: [],
  },
  instrumentation: {
    summary: "Android instrumentation tests on a device, with the version's test package.",
    fields: [
      name,
      {
        path: "test_package",
        label: "Test package",
        help: "Default: the version's test package (given, it must be that package).",
      },
      {
        path: "runner",
        label: "Runner",
        help: "Default: the test package's <instrumentation android:name>.",
      },
      whichTests("filter.classes", "Classes", "-e class: one a line, a class or Class#method."),
      whichTests("filter.packages", "Packages", "-e package: one a line."),
      whichTests("filter.annotations", "Annotations", "-e annotation: one a line, fully qualified."),
      whichTests("filter.not_annotations", "Not annotations", "-e notAnnotation: one a line."),
      whichTests("filter.not_classes", "Not class", "-e notClass: one a line, a class or Class#method."),
      whichTests("filter.not_packages", "Not package", "-e notPackage: one a line."),
      { path: "filter.size", label: "Size", default: "any", group: "Which tests run" },
      whichTests(
        "always_run",
        "Always run first",
        "One a line, a class or Class#method: run first on every shard, outside the split.",
      ),
      { path: "args", label: "Instrumentation arguments", help: "-e name value: one name=value a line." },
      {
        path: "environment",
        label: "Environment variables",
        help: "-e KEY VALUE for the runner (Flank's environment-variables): one KEY=VALUE a line.",
      },
      {
        path: "use_orchestrator",
        label: "Run through AndroidX Test Orchestrator",
        default: "no",
        help: "Each test in its own instrumentation; the agent needs --android-tools with the orchestrator's APKs.",
        group: "Device files and tools",
      },
      {
        path: "additional_apks",
        label: "Additional APKs",
        help: "Version files installed before the app (testbay upload --extra-file): one name a line.",
        group: "Device files and tools",
      },
      {
        path: "pull",
        label: "Pull after the run",
        help: "Device paths (files or folders) copied off every shard after the run, also when it failed: one a line.",
        group: "Device files and tools",
      },
      {
        path: "pull_filter",
        label: "Keep pulled files matching",
        help: "Regular expressions over the device path; default: keep every pulled file. One a line.",
        group: "Device files and tools",
      },
      {
        path: "coverage",
        label: "Collect coverage",
        default: "no",
        help: "JaCoCo .ec files of each shard kept as artifacts.",
        group: "Device files and tools",
      },
      ...deviceOptions,
      timeout,
    ],
    // push is a list of {file, to} pairs, which the form has no input for: a step with it is edited as JSON.
    leftOut: [...autoShardsOptions, "push"],
  },
  xcuitest: {
    summary:
      "iOS XCUITest tests on a simulator or device of a macOS agent, with the version's test package (a zip of xcodebuild build-for-testing output).",
    fields: [
      name,
      whichTests(
        "only_testing",
        "Only testing",
        "-only-testing: one a line, Target, Target/Class or Target/Class/method. Default: every test.",
      ),
      whichTests("skip_testing", "Skip testing", "-skip-testing: one a line, in the same form."),
      ...iosDeviceOptions,
      timeout,
    ],
    leftOut: [...autoShardsOptions],
  },
  maestro: {
    summary: "Maestro flows (YAML) run on a device after the app is installed; APP_ID is the app's package.",
    fields: [name, { path: "flows", label: "Flow", input: "texts" }, ...deviceOptions, timeout],
    leftOut: [...autoShardsOptions],
  },
  shell: {
    summary: "A shell command on an agent that allows shell steps.",
    fields: [
      name,
      { path: "run", label: "Command", input: "multiline" },
      {
        path: "junit",
        label: "JUnit XML files",
        help: "Optional glob of JUnit XML files to read results from, e.g. build/test-results/**/*.xml.",
      },
      timeout,
    ],
    leftOut: [],
  },
};
