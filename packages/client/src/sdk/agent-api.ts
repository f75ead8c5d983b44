import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { components } from "./api.generated.ts";
import { segment, type Transport } from "./transport.ts";

type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];

/** A device an agent offers in a claim (API.md §7). */
export type AgentDevice = Schema<"AgentDevice">;
export type ClaimRequest = Schema<"ClaimRequest">;
/** A claimed job; `binary_url` is absolute, or a path under the server (resolve it against the base URL). */
export type AgentJob = Schema<"AgentJob">;
/** What an agent reports in `POST /agent/jobs/{lease}/events`: log lines, step starts and ends, test cases. */
export type AgentEvent = Schema<"RunEvent">;
export type RunStatus = Schema<"CompleteRequest">["status"];
export type CompleteRequest = Schema<"CompleteRequest">;
export type CompleteResult = Schema<"CompleteResponse">;
export type HeartbeatResult = Schema<"HeartbeatResponse">;
export type EventsResult = Schema<"EventsResponse">;
export type ArtifactUploaded = Schema<"ArtifactUploaded">;

/** A test of a sharded step as the agent listed it (instrumentation: class and method; maestro: flow). */
export interface ShardTest {
  classname: string;
  name: string;
}
/**
 * What `POST /agent/jobs/{lease}/steps/{step}/tests` answers: planned when this listing made the step's shard
 * plan (the first of its shards to list), differs when an earlier plan stands over a different listing.
 */
export interface ShardTestsResult {
  planned: boolean;
  differs?: boolean;
  batches: number;
  tests: number;
  sharding: "duration" | "uniform";
}
/** A batch of a sharded step's tests, taken by this lease; null when none is left. */
export interface ShardBatch {
  id: string;
  tests: ShardTest[];
}

/**
 * What an agent says of the Appium session of its job (`POST /agent/jobs/{lease}/session`, API.md §12):
 * ready with the capabilities Appium answered, or failed with the W3C error code and message for the client.
 */
export type SessionReport =
  | { status: "ready"; capabilities: Record<string, unknown> }
  | { status: "failed"; error: string; message: string };
/** The session's state once the report was taken; anything but what was reported: it ended meanwhile, stop it. */
export interface SessionReportResult {
  state: "queued" | "ready" | "failed" | "ended";
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
    heartbeat: (leaseId: string): Promise<HeartbeatResult> =>
      transport
        .json<HeartbeatResult>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/heartbeat`,
          safeToResend: true,
        })
        .then((r) => r.body),
    events: (leaseId: string, events: AgentEvent[]): Promise<EventsResult> =>
      transport
        .json<EventsResult>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/events`,
          json: { events },
          safeToResend: true,
        })
        .then((r) => r.body),
    complete: (leaseId: string, outcome: CompleteRequest): Promise<CompleteResult> =>
      transport
        .json<CompleteResult>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/complete`,
          json: outcome,
          safeToResend: true,
        })
        .then((r) => r.body),
    /**
     * `POST /agent/jobs/{lease}/session`: the Appium session of this job is ready, or could not be created.
     * Safe to resend: a session takes the first report; a repeat only hears the state it is in.
     */
    reportSession: (leaseId: string, body: SessionReport): Promise<SessionReportResult> =>
      transport
        .json<SessionReportResult>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/session`,
          json: body,
          safeToResend: true,
        })
        .then((r) => r.body),
    /**
     * `POST /agent/jobs/{lease}/steps/{step}/tests`: the tests this shard listed for a sharded step. Safe to
     * resend: the first listing makes the plan and a repeat only hears that the plan stands.
     */
    shardTests: (leaseId: string, stepIndex: number, tests: ShardTest[]): Promise<ShardTestsResult> =>
      transport
        .json<ShardTestsResult>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/steps/${stepIndex}/tests`,
          json: { tests },
          safeToResend: true,
        })
        .then((r) => r.body),
    /**
     * `POST /agent/jobs/{lease}/steps/{step}/next-batch`: marks the batch just run done and takes the next one.
     * Safe to resend: a batch the lease already holds unfinished (taken by a call whose answer was lost) is
     * handed out again, not another one. `take: false`: only marks the batch done and takes none (null), for
     * a step that stops taking batches.
     */
    nextBatch: (
      leaseId: string,
      stepIndex: number,
      finishedBatchId?: string,
      options: { take?: boolean } = {},
    ): Promise<ShardBatch | null> =>
      transport
        .json<{ batch: ShardBatch | null }>({
          method: "POST",
          path: `/agent/jobs/${segment(leaseId)}/steps/${stepIndex}/next-batch`,
          json: {
            ...(finishedBatchId === undefined ? {} : { finished_batch_id: finishedBatchId }),
            ...(options.take === false ? { take: false } : {}),
          },
          safeToResend: true,
        })
        .then((r) => r.body.batch),
    /** `PUT /agent/jobs/{lease}/artifacts/{name}`: streams a file; `name` is a relative path. */
    uploadArtifact: async (leaseId: string, name: string, file: string, contentType: string) => {
      const { size } = await stat(file);
      const path = `/agent/jobs/${segment(leaseId)}/artifacts/${name.split("/").map(segment).join("/")}`;
      const response = await transport.json<ArtifactUploaded>({
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
