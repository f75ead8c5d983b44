/**
 * Request and response models of the Testbay API v1 (API.md §1–6), written for the client: it does not
 * import the server's code, only speaks its contract.
 */
import type { FailedExecution } from "./errors.ts";

export type { FailedExecution };

export type Platform = "android" | "ios";

/** `GET /me`: who a token belongs to. */
export interface WhoAmI {
  client_id: string;
  role: "ci" | "agent" | "admin";
  organization: { id: string; name: string };
  token_expires_at: string;
}

/** One page of a list: newest first; pass `next_cursor` as `cursor` for the next page (null: no more). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface PageQuery {
  /** 1–200, 50 by default. */
  limit?: number;
  cursor?: string;
}

export interface App {
  package_name: string;
  platform: Platform;
  display_name: string | null;
  created_at: string;
}

export interface CreateApp {
  package_name: string;
  platform: Platform;
  display_name?: string;
}

/** What the server read from the binary itself. */
export interface BinaryMetadata {
  format: "apk" | "aab" | "ipa" | "app";
  platform: Platform;
  package_name: string;
  version_name: string | null;
  version_code: number | string | null;
  min_sdk: number | null;
  target_sdk: number | null;
  min_os_version: string | null;
  abis: string[];
  permissions: string[];
  debuggable: boolean;
  display_name: string | null;
  [member: string]: unknown;
}

export interface AppVersion {
  package_name: string;
  version: string;
  size_bytes: number;
  /** Hex SHA-256 of the binary. */
  sha256: string;
  created_at: string;
  binary: BinaryMetadata;
}

export interface DeviceSpec {
  platform: Platform;
  model?: string;
  os_version?: string;
}

export interface InspectStep {
  type: "inspect";
  name?: string;
  expect: {
    max_size_mb?: number;
    min_sdk_at_most?: number;
    target_sdk_at_least?: number;
    abis_include?: string[];
    permissions_exclude?: string[];
    debuggable?: boolean;
  };
}

export interface ShellStep {
  type: "shell";
  name?: string;
  run: string;
  junit?: string;
  timeout_seconds?: number;
}

export interface InstrumentationStep {
  type: "instrumentation";
  name?: string;
  test_package: string;
  runner?: string;
  args?: Record<string, string>;
  timeout_seconds?: number;
}

export interface MaestroStep {
  type: "maestro";
  name?: string;
  flows: string[];
  timeout_seconds?: number;
}

export type Step = InspectStep | ShellStep | InstrumentationStep | MaestroStep;

export type TestPlanState = "active" | "archived" | "deleted";

export interface TestPlan {
  id: string;
  name: string;
  package_name: string;
  state: TestPlanState;
  devices: DeviceSpec[];
  steps: Step[];
  timeout_seconds: number;
  max_attempts: number;
  created_at: string;
  updated_at: string;
  /** Deleted plans only. */
  restorable_until?: string;
}

export interface CreateTestPlan {
  name: string;
  package_name: string;
  devices?: DeviceSpec[];
  steps: Step[];
  /** 30–86400; 1800 by default. */
  timeout_seconds?: number;
  /** 1–3; 1 by default. */
  max_attempts?: number;
}

export type PatchTestPlan = Partial<Omit<CreateTestPlan, "package_name">>;

export interface TestPlanQuery extends PageQuery {
  package_name?: string;
  state?: TestPlanState;
}

export type ExecutionStatus = "queued" | "running" | "passed" | "failed" | "errored" | "cancelled";

/** Statuses an execution does not leave. */
export const finalStatuses: ReadonlySet<ExecutionStatus> = new Set([
  "passed",
  "failed",
  "errored",
  "cancelled",
]);

export function isFinal(status: ExecutionStatus): boolean {
  return finalStatuses.has(status);
}

export interface Summary {
  tests: number;
  passed: number;
  failed: number;
  skipped: number;
  flaky: number;
}

export interface DeviceRun {
  /** The plan's device entry; null for a plan that runs on the agent host. */
  device: (Partial<DeviceSpec> & Record<string, unknown>) | null;
  status: ExecutionStatus;
  attempt: number;
  started_at: string | null;
  finished_at: string | null;
  [member: string]: unknown;
}

export interface Execution {
  id: string;
  test_plan_id: string;
  package_name: string;
  version: string;
  status: ExecutionStatus;
  cancel_requested: boolean;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  summary: Summary;
  devices: DeviceRun[];
  steps: Record<string, unknown>[];
}

export interface ExecutionQuery extends PageQuery {
  test_plan_id?: string;
  package_name?: string;
  version?: string;
  status?: ExecutionStatus;
}

export interface TriggerRequest {
  test_plan_id: string;
  package_name: string;
  version: string;
  env?: Record<string, string>;
}

export interface BatchTriggerRequest {
  package_name: string;
  version: string;
  /** 1–100 unique plan IDs. */
  test_plan_ids: string[];
  env?: Record<string, string>;
}

/**
 * A batch trigger's answer: 200 (every plan started) or 207 (some did). Read `failed_executions` every time
 * (rule 6): a 2xx is not full success by itself. When no plan starts the SDK throws a TestbayApiError whose
 * `failedExecutions` says why for each.
 */
export interface BatchTriggerResult {
  status: 200 | 207;
  executions: Execution[];
  failed_executions: FailedExecution[];
  /** The Idempotency-Key the trigger was sent (and retried) with. */
  idempotency_key: string;
  /** True when the server replayed an earlier answer for this key instead of triggering anew. */
  replayed: boolean;
}

export interface TriggerResult {
  execution: Execution;
  idempotency_key: string;
  replayed: boolean;
}
