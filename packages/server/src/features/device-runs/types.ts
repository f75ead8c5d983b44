import type { ExecutionStatus } from "../../db/schema.ts";
import type { FinalStatus } from "./attempt-outcome.ts";

/** A device's state as its agent says it (API.md §13); a device without one (older agents) is idle. */
export type DeviceState = "booting" | "idle" | "busy" | "resetting" | "drained" | "failed";

/**
 * A device the agent offers in a claim: one it has free right now. The members after os_version are API.md
 * §13's, optional so that agents older than them keep working (null: the agent does not know).
 */
export interface AgentDevice {
  serial: string;
  platform: string;
  model: string;
  os_version: string;
  /** Android's ro.build.version.sdk. */
  api_level?: number | null;
  /** ro.product.cpu.abi. */
  abi?: string | null;
  /** An emulator or a simulator. */
  emulator?: boolean;
  /** Started and looked after by the agent (--emulator, --simulator). */
  managed?: boolean;
  /** The AVD or device type a managed device is an instance of. */
  pool?: string | null;
  /** The agent's --label KEY=VALUE. */
  labels?: Record<string, string>;
  state?: DeviceState;
  /** Why, when failed or drained. */
  error?: string | null;
  /** A managed device: how long its last boot took (ms). */
  boot_ms?: number | null;
}

export interface ClaimRequest {
  /** The agent client's organization. */
  organizationId: string;
  /** An `--all-orgs` agent client's claim: a run of any organization, chosen fairly (fair-share.ts). */
  allOrganizations?: boolean;
  agentId: string;
  /** The agent's id of this claim, so that a claim it gave up on can be named later (abandoned). */
  claimId?: string;
  /** Claims this agent gave up on while they waited (their answer may have been lost): put their runs back. */
  abandonedClaims?: readonly string[];
  devices: readonly AgentDevice[];
  /** Devices the agent no longer offers after repeated infrastructure failures (shown, never matched). */
  drainedDevices?: readonly AgentDevice[];
  /** The agent can take a run that needs no device (plans with devices: []) right now. */
  host: boolean;
  stepTypes: readonly string[];
}

/** A device run as its lease holder sees it. */
export interface LeasedRun {
  leaseId: string;
  leaseExpiresAt: string;
  deviceRunId: string;
  executionId: string;
  organizationId: string;
  position: number;
  attempt: number;
  maxAttempts: number;
  device: AgentDevice | null;
  cancelRequested: boolean;
  /** The execution's plan (flaky detection, stranded tests); undefined for a WebDriver session. Not read by claims. */
  testPlanId?: string;
}

/** What the agent needs to run a claimed run, read in the claim's own statement (API.md §7, the job). */
export interface ClaimedRun extends LeasedRun {
  plan: Record<string, unknown>;
  env: Record<string, string>;
  /** Null, with version and binary, for a WebDriver session that names no registered app (API.md §12). */
  packageName: string | null;
  version: string | null;
  /** The version's row id (version files are looked up by it); null when version is. */
  appVersionId: string | null;
  /** The plan's device entry the run was made for (device_runs.device); null for a run that needs no device. */
  deviceEntry: Record<string, unknown> | null;
  binary: { sha256: string; sizeBytes: number; metadata: unknown } | null;
  testPackage: { sha256: string; sizeBytes: number; test: unknown } | null;
  /** Set when this claim started the execution (its first run): when the execution was queued (metrics). */
  executionQueuedAt?: string;
}

export interface Completion {
  executionId: string;
  status: FinalStatus;
  /** The run goes back to the queue for another attempt. */
  requeued: boolean;
  /** The execution's status once this attempt was counted. */
  executionStatus: ExecutionStatus;
}
