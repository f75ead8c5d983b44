/**
 * The contract between the agent's job runner and the step runners (inspect, shell, instrumentation,
 * maestro). A step runner does one step of a plan on one device (or the host) and reports what it saw
 * through the context; it never talks HTTP itself.
 */

/** What the server stored about the uploaded binary (the SDK's model of it). */
export type { BinaryMetadata } from "@testbay/client";

import type { BinaryMetadata } from "@testbay/client";

/** A device the agent found (adb devices -l + getprop), or null when a step runs on the host itself. */
export interface Device {
  serial: string;
  platform: "android" | "ios";
  model: string;
  os_version: string;
}

export type TestCaseStatus = "passed" | "failed" | "skipped" | "errored";

/** One test case result, as stored by the server and written into the merged JUnit report. */
export interface TestCase {
  /** JUnit classname (instrumentation: the test class; inspect: "inspect"). */
  classname: string;
  name: string;
  status: TestCaseStatus;
  duration_ms: number | null;
  /** One line: the assertion message (inspect: includes the actual value). */
  message: string | null;
  /** Stack trace or longer output. */
  details: string | null;
}

export type StepStatus = "passed" | "failed" | "errored" | "cancelled";

export interface StepOutcome {
  status: StepStatus;
  /** Why, in one line, when not passed: "exit code 3", "timed out after 600 s", "adb install failed: …". */
  message: string | null;
  exit_code?: number | null;
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
}

export interface StepRunner<S> {
  run(step: S, context: StepContext): Promise<StepOutcome>;
}
