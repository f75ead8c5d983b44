import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { BinaryMetadata, Step, Summary } from "./models.ts";
import { segment, type Transport } from "./transport.ts";

/** A device an agent offers in a claim (API.md §7). */
export interface AgentDevice {
  serial: string;
  platform: "android" | "ios";
  model: string;
  os_version: string;
}

export interface ClaimRequest {
  agent_id: string;
  devices: AgentDevice[];
  /** Whether the agent can take a run that needs no device right now (default true). */
  host?: boolean;
  step_types?: Array<Step["type"]>;
  /** Long poll: wait up to this many seconds (≤ 30) for work. */
  wait_seconds?: number;
}

export interface AgentJob {
  lease_id: string;
  lease_expires_at: string;
  lease_ttl_seconds: number;
  execution_id: string;
  device_run: { id: string; position: number; attempt: number; max_attempts: number };
  plan: { name: string; steps: Step[]; timeout_seconds: number; max_attempts: number; devices: unknown[] };
  package_name: string;
  version: string;
  env: Record<string, string>;
  /** Absolute, or a path under the server (resolve it against the base URL's origin). */
  binary_url: string;
  binary: { sha256: string; size_bytes: number; metadata: BinaryMetadata };
  device: AgentDevice | null;
}

export type AgentEvent =
  | { seq: number; type: "log"; at: string; stream: "stdout" | "stderr" | "agent"; line: string }
  | { seq: number; type: "step_started"; at: string; step_index: number }
  | {
      seq: number;
      type: "step_finished";
      at: string;
      step_index: number;
      status: "passed" | "failed" | "errored" | "cancelled" | "skipped";
      message?: string | null;
    }
  | {
      seq: number;
      type: "test_case";
      step_index: number;
      classname: string;
      name: string;
      status: "passed" | "failed" | "skipped" | "errored";
      duration_ms?: number | null;
      message?: string | null;
      details?: string | null;
    };

export type RunStatus = "passed" | "failed" | "errored" | "cancelled";

export interface CompleteResult {
  status: RunStatus;
  requeued: boolean;
  execution_status: string;
}

/**
 * The agent protocol (API.md §7) over the SDK's transport, so agents follow the same token, pacing and
 * retry rules as pipelines. What is safe to resend is marked so: heartbeats, event batches (the server
 * stores each seq once), completions and artifact PUTs. A claim is not: a claim whose answer was lost
 * leaves a lease nobody renews, which the server re-queues after its TTL.
 */
export function agentApi(transport: Transport) {
  return {
    /** `POST /agent/claim`: a job, or undefined when none came within wait_seconds (204). */
    claim: async (request: ClaimRequest, signal?: AbortSignal): Promise<AgentJob | undefined> => {
      const response = await transport.json<{ job: AgentJob } | undefined>({
        method: "POST",
        path: "/agent/claim",
        json: request,
        signal,
      });
      return response.status === 204 ? undefined : response.body?.job;
    },
    heartbeat: (leaseId: string): Promise<{ cancel_requested: boolean; lease_expires_at: string }> =>
      transport
        .json<{ cancel_requested: boolean; lease_expires_at: string }>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/heartbeat`,
          safeToResend: true,
        })
        .then((r) => r.body),
    events: (
      leaseId: string,
      events: AgentEvent[],
    ): Promise<{ accepted: number; cancel_requested: boolean }> =>
      transport
        .json<{ accepted: number; cancel_requested: boolean }>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/events`,
          json: { events },
          safeToResend: true,
        })
        .then((r) => r.body),
    complete: (
      leaseId: string,
      outcome: { status: RunStatus; reason?: string; summary?: Summary },
    ): Promise<CompleteResult> =>
      transport
        .json<CompleteResult>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/complete`,
          json: outcome,
          safeToResend: true,
        })
        .then((r) => r.body),
    /** `PUT /agent/jobs/{lease}/artifacts/{name}`: streams a file; `name` is a relative path. */
    uploadArtifact: async (leaseId: string, name: string, file: string, contentType: string) => {
      const { size } = await stat(file);
      const path = `/agent/jobs/${segment(leaseId)}/artifacts/${name.split("/").map(segment).join("/")}`;
      const response = await transport.json<{ name: string; size_bytes: number; sha256: string }>({
        method: "PUT",
        path,
        body: () => ({
          body: createReadStream(file),
          headers: { "content-type": contentType, "content-length": String(size) },
        }),
      });
      return response.body;
    },
  };
}

export type AgentApi = ReturnType<typeof agentApi>;
