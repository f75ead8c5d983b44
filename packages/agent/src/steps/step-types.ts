/**
 * The contract between the agent's job runner and the step runners (inspect, shell, instrumentation,
 * maestro). A step runner does one step of a plan on one device (or the host) and reports what it saw
 * through the context; it never talks HTTP itself.
 */

/** What the server stored about the uploaded binary (the SDK's model of it). */
export type { BinaryMetadata } from "@testbay/client";

import type {
  AgentDevice,
  AgentEvent,
  AgentJob,
  BinaryMetadata,
  ShardBatch,
  ShardTest,
  ShardTestsResult,
} from "@testbay/client";

/** A device the agent found (adb devices -l + getprop), as it offers it in claims; null: the host itself. */
export type Device = AgentDevice;

type TestCaseEvent = Extract<AgentEvent, { type: "test_case" }>;

export type TestCaseStatus = TestCaseEvent["status"];

/**
 * One test case result, as the events endpoint takes it (and the merged JUnit report shows it): classname
 * (instrumentation: the test class; inspect: "inspect"), name, status, duration, a one-line message
 * (inspect: with the actual value) and details (stack trace or longer output); every member present.
 */
export type TestCase = Required<
  Omit<TestCaseEvent, "seq" | "type" | "step_index" | "artifacts" | "video_offset_ms" | "retry">
> & {
  /** Which try of the test this is: 0 (or absent) its first run, 1.. its reruns alone (retry_failed_tests). */
  retry?: number;
  /** Names of the artifacts captured for this test (its failure screenshot, logcat cut, video segment). */
  artifacts?: string[];
  /** How far into its video segment (the .mp4 among `artifacts`) the test failed, in ms. */
  video_offset_ms?: number;
};

export type StepStatus = "passed" | "failed" | "errored" | "cancelled";

export interface StepOutcome {
  status: StepStatus;
  /** Why, in one line, when not passed: "exit code 3", "timed out after 600 s", "adb install failed: …". */
  message: string | null;
  exit_code?: number | null;
  /**
   * The device went away during the step (adb lost it): an infrastructure error that says nothing about the
   * app, so the run is handed back to be run again (reason device_lost) instead of reported as a failure.
   */
  deviceLost?: boolean;
}

type JobTestPackage = NonNullable<AgentJob["test_package"]>;

/** The version's test package (an instrumentation APK or an XCUITest zip, by `format`) as the job describes it. */
export type TestPackageInfo =
  | {
      format: "apk";
      sha256: string;
      size_bytes: number;
      test: Pick<
        Extract<JobTestPackage, { format: "apk" }>["test"],
        "package_name" | "runner" | "target_package"
      >;
    }
  | Omit<Extract<JobTestPackage, { format: "xctest" }>, "url">;

/**
 * The device run's shard (API.md §5 `shards`) and the server calls a sharded step makes on its behalf: the
 * listing of its tests, then batch after batch of them until none is left.
 */
export interface ShardContext {
  /** This device run's shard, 0 … count - 1. */
  index: number;
  /** How many shards the device entry runs as (the largest `shards` among the plan's steps). */
  count: number;
  listTests(tests: ShardTest[]): Promise<ShardTestsResult>;
  /**
   * Marks `finishedBatchId` done (when given) and takes the next batch; null when none is left. With
   * `take: false` it only marks the batch done (the step stops taking batches) and returns null.
   */
  nextBatch(finishedBatchId?: string, options?: { take?: boolean }): Promise<ShardBatch | null>;
}

export interface StepContext {
  /** A fresh, empty working directory for this step (the runner may write anything there). */
  workDir: string;
  /** Where files to keep as artifacts go (TESTBAY_ARTIFACTS_DIR); uploaded by the runner after the job. */
  artifactsDir: string;
  /** Downloads the binary once (cached by sha256) and returns its local path. Only call when needed. */
  appPath(): Promise<string>;
  binary: BinaryMetadata;
  binarySizeBytes: number;
  /** The version's test package, null when it has none. */
  testPackage: TestPackageInfo | null;
  /** Downloads the test package once (cached by sha256) and returns its local path. */
  testPackagePath(): Promise<string>;
  packageName: string;
  version: string;
  /** The execution's env (from the trigger), passed to shell steps on top of the agent's own env. */
  env: Record<string, string>;
  device: Device | null;
  /** Aborted on cancel (heartbeat said cancel_requested), on the plan's timeout, or on agent shutdown. */
  signal: AbortSignal;
  /** The step's own time limit in ms (step timeout_seconds, else what is left of the plan's timeout). */
  timeoutMs: number;
  /** Output lines, in order; batched and sent to the server by the runner. */
  log(stream: "stdout" | "stderr" | "agent", line: string): void;
  testCase(testCase: TestCase): void;
  /** The shard this device run is and its server calls; absent outside jobs (tests), which is shard 0 of 1. */
  shard?: ShardContext;
  /**
   * Downloads one of the version's files (API.md §14: additional_apks, push) once, cached by sha256 like the
   * binary, and returns its local path; rejects for a name the version does not have. Absent: no files.
   */
  versionFilePath?(name: string): Promise<string>;
  /** The agent's `--android-tools DIR` (the orchestrator and test-services APKs); null or absent: none. */
  androidTools?: string | null;
  /** The device entry's locale and orientation, set on the device before a device step runs. */
  deviceSettings?: { locale?: string; orientation?: "portrait" | "landscape" };
}

export interface StepRunner<S> {
  run(step: S, context: StepContext): Promise<StepOutcome>;
}
