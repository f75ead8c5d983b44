import { type Static, Type } from "typebox";
import { PageQuery } from "../../http/pagination.ts";
import { PackageName, Platform, packageNamePattern } from "../apps/index.ts";

const StepName = Type.Optional(
  Type.String({ minLength: 1, maxLength: 200, description: "Shown in results." }),
);
const StepTimeout = Type.Optional(Type.Integer({ minimum: 1, maximum: 24 * 3600 }));

export const InspectStep = Type.Object(
  {
    type: Type.Literal("inspect"),
    name: StepName,
    expect: Type.Object(
      {
        max_size_mb: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
        min_sdk_at_most: Type.Optional(Type.Integer({ minimum: 1 })),
        target_sdk_at_least: Type.Optional(Type.Integer({ minimum: 1 })),
        abis_include: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 20 }),
        ),
        permissions_exclude: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200 }),
        ),
        debuggable: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
  },
  { additionalProperties: false, description: "Checks the uploaded binary's metadata; needs no device." },
);

export const ShellStep = Type.Object(
  {
    type: Type.Literal("shell"),
    name: StepName,
    run: Type.String({ minLength: 1, maxLength: 64 * 1024 }),
    junit: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: "Glob of JUnit XML files to ingest" }),
    ),
    timeout_seconds: StepTimeout,
  },
  { additionalProperties: false, description: "Runs a shell command on an agent that allows shell steps." },
);

/**
 * What a device step captures, how it treats the device, how its tests are split over devices and how failed
 * ones are rerun (API.md §5).
 */
const DeviceOptions = {
  clear_package_data: Type.Optional(
    Type.Boolean({ description: "pm clear the app before its tests run (default false)" }),
  ),
  record_video: Type.Optional(
    Type.Union([Type.Literal("never"), Type.Literal("on_failure"), Type.Literal("always")], {
      description: "Screen recording kept never, only when a test failed (the default), or always",
    }),
  ),
  logcat: Type.Optional(
    Type.Boolean({ description: "Capture logcat during the run, whole and cut per test (default true)" }),
  ),
  screenshot_on_failure: Type.Optional(
    Type.Boolean({ description: "A screenshot the moment a test fails (default true)" }),
  ),
  shards: Type.Optional(
    Type.Union([
      Type.Integer({
        minimum: 1,
        maximum: 50,
        description:
          "Split this step's tests over this many device runs, each on its own device matching the device entry (default 1). The entry makes as many device runs as the largest shards among its steps; a step with fewer shards runs on the first of them only, and steps that do not split tests (inspect, shell) run on the first shard (shard 0) only, so no result is counted twice. Each shard's agent lists the step's tests and the server splits them (sharding).",
      }),
      Type.Literal("auto", {
        description:
          "As many shards as fit target_minutes (API.md §13): at trigger, the sum of the plan's tests' p80 durations (GET /v1/tests) ÷ target_minutes, rounded up, capped by max_shards and by the matching devices online; max_shards (so capped) for a plan without history. Each device run says what was chosen and why (shards_planned); the execution's copy of the plan has the number.",
      }),
    ]),
  ),
  target_minutes: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1440,
      description: 'With shards "auto": how long each shard should run, in minutes (default 10)',
    }),
  ),
  max_shards: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 50,
      description: 'With shards "auto": the most shards it may choose (default 10)',
    }),
  ),
  sharding: Type.Optional(
    Type.Union([Type.Literal("duration"), Type.Literal("uniform")], {
      description:
        "How the listed tests are split over the shards: duration (the default) cuts them, longest first by each test's p80 duration over this plan's recent runs (15 s for a test never seen), into batches of a queue all shards take from, so a device that finishes early takes more; uniform gives each shard a fixed list of equal count",
    }),
  ),
  retry_failed_tests: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 5,
      description:
        "Rerun each failed test alone on the same device up to this many times, stopping at its first pass (default 0). A test that passes on a rerun is flaky; the number of tests does not change.",
    }),
  ),
};

const FilterNames = (description: string) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 300, pattern: "^[A-Za-z0-9_.$#]+$" }), {
      minItems: 1,
      maxItems: 200,
      description,
    }),
  );

/** A version file's name (PUT /apps/{package_name}/versions/{version}/files/{name}, API.md §14). */
export const versionFileNamePattern = "^[A-Za-z0-9._-]{1,100}$";
const VersionFileName = (description: string) =>
  Type.String({ minLength: 1, maxLength: 100, pattern: versionFileNamePattern, description });
/** An absolute path on the device: what adb push writes to and adb pull reads. */
const DevicePath = (description: string) =>
  Type.String({ minLength: 2, maxLength: 1000, pattern: "^/[^\\u0000\\n\\r]*$", description });

/** The instrumentation environment keys Testbay writes itself, and the plan field that asks for each (plan-checks.ts). */
export const reservedEnvironmentKeys: Readonly<Record<string, string>> = {
  class: "filter.classes",
  notClass: "filter.not_classes",
  package: "filter.packages",
  notPackage: "filter.not_packages",
  annotation: "filter.annotations",
  notAnnotation: "filter.not_annotations",
  size: "filter.size",
  testFile: "filter.classes (Testbay writes -e testFile itself for shards and retries)",
  notTestFile: "filter.not_classes",
  log: "nothing (Testbay lists the tests with -e log true itself)",
  targetInstrumentation: "runner (with use_orchestrator: true)",
  coverage: "coverage: true",
  coverageFile: "coverage: true",
  coverageFilePath: "coverage: true",
};

/**
 * What an instrumentation step carries to and from the device besides the tests, and how it runs them (API.md
 * §14, Flank's options): the agent does each; the server validates them and checks the files named exist.
 */
const DeviceFileOptions = {
  environment: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: 1000 }), {
      maxProperties: 50,
      // propertyNames, not a patterned key: a Record's key pattern becomes patternProperties, which lets any
      // other key through (and which the OpenAPI document flattens away).
      propertyNames: { pattern: "^[A-Za-z_][A-Za-z0-9_.]{0,99}$" },
      description:
        "Each becomes -e KEY VALUE to the runner (Flank's environment-variables). Keys Testbay sets itself (class, notClass, package, notPackage, annotation, notAnnotation, size, testFile, notTestFile, log, targetInstrumentation, coverage, coverageFile, coverageFilePath) are refused: use the plan field named in the error. clearPackageData is allowed (the orchestrator clears the app between tests).",
    }),
  ),
  use_orchestrator: Type.Optional(
    Type.Boolean({
      description:
        "Run through AndroidX Test Orchestrator, each test in its own instrumentation (default false); the agent needs the orchestrator and test-services APKs in its --android-tools DIR",
    }),
  ),
  additional_apks: Type.Optional(
    Type.Array(VersionFileName("A version file (PUT …/files/{name}) that is an APK"), {
      minItems: 1,
      maxItems: 10,
      uniqueItems: true,
      description: "Version files installed before the app, with adb install -r -t -g",
    }),
  ),
  push: Type.Optional(
    Type.Array(
      Type.Object(
        {
          file: VersionFileName("The version file to push"),
          to: DevicePath(
            "The absolute device path it is pushed to (adb push), e.g. /sdcard/fixtures/data.json",
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 20, description: "Version files pushed to the device before the run" },
    ),
  ),
  pull: Type.Optional(
    Type.Array(DevicePath("An absolute device path: a file or a directory"), {
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      description:
        "Pulled after the run on every shard, also when it failed, and kept as artifacts pulled/<shard>/<path without its leading slash>; a path missing on the device is a warning in the run's log",
    }),
  ),
  pull_filter: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
      minItems: 1,
      maxItems: 20,
      description:
        "JavaScript regular expressions: when given, only pulled files whose device path matches one are kept (Flank's files-to-download)",
    }),
  ),
  coverage: Type.Optional(
    Type.Boolean({
      description:
        "-e coverage true with a coverage file per shard (-e coverageFile), or per test under the orchestrator (-e coverageFilePath); the files kept as artifacts coverage/<shard>/<file name>",
    }),
  ),
  always_run: Type.Optional(
    Type.Array(
      Type.String({ minLength: 1, maxLength: 300, pattern: "^[A-Za-z0-9_.$]+(#[A-Za-z0-9_$]+)?$" }),
      {
        minItems: 1,
        maxItems: 200,
        uniqueItems: true,
        description:
          "Class or Class#method run first on every shard and not counted in sharding (Flank's test-targets-always-run)",
      },
    ),
  ),
};

export const InstrumentationStep = Type.Object(
  {
    type: Type.Literal("instrumentation"),
    name: StepName,
    test_package: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: packageNamePattern,
        description:
          "The test APK's package; default: the version's test package. Given, it must be that package.",
      }),
    ),
    runner: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 300,
        pattern: "^[A-Za-z0-9_.$/]+$",
        description: "The instrumentation runner; default: the test package's <instrumentation android:name>",
      }),
    ),
    args: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 1000 }), {
        maxProperties: 50,
        // As environment's: propertyNames is what holds every key to the pattern.
        propertyNames: { pattern: "^[A-Za-z0-9_.-]{1,100}$" },
      }),
    ),
    filter: Type.Optional(
      Type.Object(
        {
          classes: FilterNames("-e class: classes or Class#method"),
          packages: FilterNames("-e package"),
          annotations: FilterNames("-e annotation: fully qualified annotation names"),
          not_annotations: FilterNames("-e notAnnotation"),
          not_classes: FilterNames("-e notClass: classes or Class#method left out"),
          not_packages: FilterNames("-e notPackage: packages left out"),
          size: Type.Optional(
            Type.Union([Type.Literal("small"), Type.Literal("medium"), Type.Literal("large")], {
              description: "-e size",
            }),
          ),
        },
        { additionalProperties: false, minProperties: 1, description: "Which tests run" },
      ),
    ),
    ...DeviceFileOptions,
    ...DeviceOptions,
    timeout_seconds: StepTimeout,
  },
  {
    additionalProperties: false,
    description:
      "Android instrumentation tests via adb (am instrument -r) with the version's test package (PUT …/test-package).",
  },
);

export const MaestroStep = Type.Object(
  {
    type: Type.Literal("maestro"),
    name: StepName,
    flows: Type.Array(Type.String({ minLength: 1, maxLength: 256 * 1024 }), { minItems: 1, maxItems: 50 }),
    ...DeviceOptions,
    timeout_seconds: StepTimeout,
  },
  {
    additionalProperties: false,
    description:
      "Maestro flows (YAML texts) run with the maestro CLI after the app is installed; flows get the app's package as the APP_ID variable.",
  },
);

const TestIdentifiers = (description: string) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
      minItems: 1,
      maxItems: 200,
      uniqueItems: true,
      description,
    }),
  );

export const XcuitestStep = Type.Object(
  {
    type: Type.Literal("xcuitest"),
    name: StepName,
    only_testing: TestIdentifiers(
      "xcodebuild -only-testing: run only these, each Target, Target/Class or Target/Class/method (e.g. ShopUITests/CheckoutTests/testPayWithCard)",
    ),
    skip_testing: TestIdentifiers(
      "xcodebuild -skip-testing: leave these out, in the same Target[/Class[/method]] form",
    ),
    ...DeviceOptions,
    timeout_seconds: StepTimeout,
  },
  {
    additionalProperties: false,
    description:
      "iOS XCUITest tests run with xcodebuild test-without-building on a macOS agent's simulator or device, from the version's test package (a zip of xcodebuild build-for-testing output, PUT …/test-package). For iOS, logcat means the device log and clear_package_data uninstalls the app (or erases the simulator) first.",
  },
);

/**
 * A step, told apart by `type`. Declared as a discriminated oneOf so a mistake in a step is reported
 * against that step's own fields, not as "matches none of four shapes".
 */
export const Step = Type.Unsafe<
  | Static<typeof InspectStep>
  | Static<typeof ShellStep>
  | Static<typeof InstrumentationStep>
  | Static<typeof MaestroStep>
  | Static<typeof XcuitestStep>
>({
  type: "object",
  required: ["type"],
  discriminator: { propertyName: "type" },
  oneOf: [InspectStep, ShellStep, InstrumentationStep, XcuitestStep, MaestroStep],
});
export type Step = Static<typeof Step>;

/** What os_version_min/max may be: dotted numbers, compared a component at a time (device-runs/device-selectors.ts). */
const ComparableVersion = (description: string) =>
  Type.Optional(Type.String({ pattern: "^[0-9]{1,6}(\\.[0-9]{1,6}){0,5}$", maxLength: 50, description }));
const ApiLevel = (description: string) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description }));

/**
 * A device entry: the platform, and what a device must be to run it (API.md §5, §13). Every selector given must
 * hold; device-runs/device-selectors.ts is the rule the claim, the waiting reason and shards: "auto" share.
 */
export const DeviceSpec = Type.Object(
  {
    platform: Platform,
    model: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: "The device's model, exactly" }),
    ),
    os_version: Type.Optional(
      Type.String({ minLength: 1, maxLength: 50, description: "The device's OS version, exactly" }),
    ),
    api_level_min: ApiLevel("Android devices of this API level (ro.build.version.sdk) or newer"),
    api_level_max: ApiLevel("Android devices of this API level or older"),
    os_version_min: ComparableVersion(
      "Devices of this OS version or newer, compared as versions a component at a time: 9 < 10 < 10.1 (10 = 10.0)",
    ),
    os_version_max: ComparableVersion(
      "Devices of this OS version or older, compared as versions: 17 admits 17.0, not 17.4 (write 17.99 for every 17.x)",
    ),
    models: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        minItems: 1,
        maxItems: 20,
        uniqueItems: true,
        description: "Any of these models (not with model)",
      }),
    ),
    abi: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 50,
        description: "The device's ABI (ro.product.cpu.abi): x86_64, arm64-v8a",
      }),
    ),
    emulator: Type.Optional(
      Type.Boolean({ description: "true: emulators and simulators only; false: real devices only" }),
    ),
    labels: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 200 }), {
        maxProperties: 16,
        // As environment's: propertyNames holds every key to the pattern (a label is KEY=VALUE).
        propertyNames: { pattern: "^[^=]{1,64}$" },
        description: "Labels the device's agent gives it (--label KEY=VALUE): every one must match",
      }),
    ),
    locale: Type.Optional(
      Type.String({
        pattern: "^[a-z]{2,3}([_-][A-Z]{2})?$",
        maxLength: 6,
        description:
          "The device's locale for the run (en_US, fr, de_DE), set before it on emulators (Android only); a device that cannot take it is an infrastructure error",
      }),
    ),
    orientation: Type.Optional(
      Type.Union([Type.Literal("portrait"), Type.Literal("landscape")], {
        description: "The screen orientation for the run, set before it (Android only)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeviceSpec = Static<typeof DeviceSpec>;

const Devices = Type.Array(DeviceSpec, {
  maxItems: 20,
  description: "One device run per entry; [] runs once on the agent host itself.",
});
const Steps = Type.Array(Step, { minItems: 1, maxItems: 50 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Timeout = Type.Integer({ minimum: 30, maximum: 24 * 3600, description: "Seconds; default 1800" });
const MaxAttempts = Type.Integer({ minimum: 1, maximum: 3, description: "Default 1" });

export const CreateTestPlanBody = Type.Object(
  {
    name: Name,
    package_name: PackageName,
    devices: Type.Optional(Devices),
    steps: Steps,
    timeout_seconds: Type.Optional(Timeout),
    max_attempts: Type.Optional(MaxAttempts),
  },
  { additionalProperties: false },
);

export const PatchTestPlanBody = Type.Object(
  {
    name: Type.Optional(Name),
    devices: Type.Optional(Devices),
    steps: Type.Optional(Steps),
    timeout_seconds: Type.Optional(Timeout),
    max_attempts: Type.Optional(MaxAttempts),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const TestPlanState = Type.Union([
  Type.Literal("active"),
  Type.Literal("archived"),
  Type.Literal("deleted"),
]);

export const TestPlanView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  package_name: Type.String(),
  state: TestPlanState,
  devices: Type.Array(DeviceSpec),
  steps: Type.Array(Type.Unsafe<Step>({ type: "object", additionalProperties: true })),
  timeout_seconds: Type.Integer(),
  max_attempts: Type.Integer(),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
  restorable_until: Type.Optional(Type.String({ format: "date-time", description: "Deleted plans only" })),
});

export const TestPlanId = Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_]+$" });
export const TestPlanParams = Type.Object({ id: TestPlanId });

export const TestPlanListQuery = Type.Object(
  {
    ...PageQuery,
    package_name: Type.Optional(PackageName),
    state: Type.Optional(TestPlanState),
  },
  { additionalProperties: false },
);

export const TestPlanList = Type.Object({
  items: Type.Array(TestPlanView),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
