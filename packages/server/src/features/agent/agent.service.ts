import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { type Clock, isoTime } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import { privateDirMode } from "../../fs-permissions.ts";
import { BodyTooLargeError, receiveBody } from "../../http/upload/receive-body.ts";
import { newId } from "../../ids.ts";
import type { BlobStore, ByteRange } from "../../storage/index.ts";
import type {
  ClaimedRun,
  ClaimRequest,
  DeviceRuns,
  FinalStatus,
  HeldRun,
  LeasedRun,
  ListedTest,
  RunShard,
} from "../device-runs/index.ts";
import type { LogStore, ResultsRepo, RunEvent } from "../executions/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import { testPackageContent, type VersionFileRecord, type VersionFilesService } from "../versions/index.ts";
import type { AgentAppium, AgentsRepo } from "./agents.repo.ts";
import type { WorkSignal } from "./work-signal.ts";

export interface AgentServiceOptions {
  /** Device runs' lives: claims, leases, ends of attempts (features/device-runs). */
  runs: DeviceRuns;
  /** The agents seen by their claims and heartbeats (GET /agents, waiting_reason). */
  seen: AgentsRepo;
  results: ResultsRepo;
  /** Where log events go: chunk objects in the blob store. */
  logs: LogStore;
  signal: WorkSignal;
  /** Tells the dashboards watching an organization (GET /v1/events) that one of its executions changed. */
  changes?: ExecutionChanges;
  store: BlobStore;
  /** The files of the version a job runs (API.md §14): listed in the job, downloaded by its agent. */
  versionFiles: Pick<VersionFilesService, "ofVersion" | "ofExecution" | "read">;
  clock: Clock;
  leaseTtlSeconds: number;
  maxArtifactBytes: number;
  stagingDir: string;
  /** An artifact body with no byte for this long is cut off (TESTBAY_BODY_IDLE_TIMEOUT_SECONDS). */
  bodyIdleTimeoutMs?: number;
  /** TESTBAY_PUBLIC_URL (ends in /v1), to hand out absolute binary URLs; relative ones otherwise. */
  publicUrl: string | undefined;
  /** Even without a wake-up, a waiting claim looks again this often: a wake-up may be missed (a dropped
   * listening connection, another instance on SQLite). */
  pollIntervalMs: number;
}

/** What an --all-orgs agent's claim waits on: a wake-up for any organization (work-signal.ts). */
const anyOrganization = "*";

/** How often an agent claiming again with the same offer is recorded as seen again (see AgentService.seen). */
const seenRefreshMs = 5_000;

/** A claim as this feature takes it: what device-runs matches, and what only GET /agents shows (API.md §12). */
export type AgentClaim = ClaimRequest & {
  /** The Appium an agent started with --appium offers; absent from every other agent's claim. */
  appium?: AgentAppium;
};

/** A device run that ended for good as its agent completed it (not re-queued). */
export interface EndedRun {
  organizationId: string;
  executionId: string;
  status: FinalStatus;
  /** Why, as the agent said (deleted, idle_timeout, …), or null. */
  reason: string | null;
}

/** The agent protocol (API.md §7): claims with long polling, heartbeats, results, artifacts, completion. */
export class AgentService {
  private closing = false;
  /** Told of each run its agent completed for good (features/sessions marks a session ended). */
  private readonly endListeners = new Set<(ended: EndedRun) => Promise<void>>();
  /** What each agent offered when this instance last recorded it as seen, and when (see `seen`). */
  private readonly lastSeen = new Map<string, { offer: string; at: number }>();

  constructor(private readonly options: AgentServiceOptions) {}

  private get ttlMs(): number {
    return this.options.leaseTtlSeconds * 1000;
  }

  /**
   * Claims the oldest run this agent can do, waiting up to `waitSeconds` for one to be queued. Returns
   * undefined when none came (the route answers 204). The wait ends early when the caller goes away.
   */
  async claim(request: AgentClaim, waitSeconds: number, abort: AbortSignal) {
    const deadline = performance.now() + waitSeconds * 1000;
    // Once per claim, not per look inside its long poll: the next claim comes within 30 s anyway.
    await this.seen(request);
    if (request.abandonedClaims?.length) {
      const { agentId, abandonedClaims } = request;
      const now = this.options.clock.now();
      // An --all-orgs agent's abandoned claims may have taken runs of any organization.
      const organizationId = request.allOrganizations ? undefined : request.organizationId;
      for (const released of await this.options.runs.releaseAbandoned(
        organizationId,
        agentId,
        abandonedClaims,
        now,
      )) {
        this.options.signal.notify(released);
        this.options.changes?.changed(released);
      }
    }
    for (;;) {
      if (this.closing) return undefined;
      const run = await this.options.runs.claim(request, this.options.clock.now(), this.ttlMs);
      if (run) {
        this.changed(run);
        const files =
          run.appVersionId === null ? [] : await this.options.versionFiles.ofVersion(run.appVersionId);
        return this.jobFor(run, files, request.allOrganizations === true);
      }
      const left = deadline - performance.now();
      if (left <= 0 || abort.aborted) return undefined;
      await this.options.signal.wait(
        request.allOrganizations ? anyOrganization : request.organizationId,
        Math.min(left, this.options.pollIntervalMs),
        abort,
      );
    }
  }

  /** The organization of the run a lease holds (an --all-orgs agent's lease calls); undefined when none. */
  organizationOfLease(leaseId: string): Promise<string | undefined> {
    return this.options.runs.organizationOfLease(leaseId);
  }

  /**
   * `agentOrganizationId`: the organization of the agent's client, which differs from the run's
   * (`organizationId`) when a fleet agent (`--all-orgs`) holds another organization's run.
   */
  async heartbeat(organizationId: string, leaseId: string, agentOrganizationId: string = organizationId) {
    const lease = await this.options.runs.renew(
      organizationId,
      leaseId,
      this.options.clock.now(),
      this.ttlMs,
    );
    if (!lease) throw leaseLost(leaseId);
    // A busy agent may not claim for a long while: its heartbeats keep it online.
    await this.options.seen.heartbeat(organizationId, leaseId, this.options.clock.now(), agentOrganizationId);
    return { cancel_requested: lease.cancelRequested, lease_expires_at: lease.leaseExpiresAt };
  }

  async record(organizationId: string, leaseId: string, events: readonly RunEvent[]) {
    const run = await this.held(organizationId, leaseId);
    const lines = events.filter((event): event is Extract<RunEvent, { type: "log" }> => event.type === "log");
    // Lines first: both halves are idempotent by seq, so if either fails the agent's resent batch completes it.
    await this.options.logs.append(run, lines);
    await this.options.results.recordBatch(run, events);
    this.changed(run);
    return { accepted: events.length, cancel_requested: run.cancelRequested };
  }

  /**
   * Streams an artifact into the blob store. A second upload under the same name in the same attempt
   * replaces the first (PUT semantics), so an agent may retry an upload whose answer it lost.
   */
  async putArtifact(
    organizationId: string,
    leaseId: string,
    name: string,
    body: Readable,
    contentType: string,
  ) {
    const run = await this.held(organizationId, leaseId);
    await mkdir(this.options.stagingDir, { recursive: true, mode: privateDirMode });
    const staged = path.join(this.options.stagingDir, `${newId("art")}.part`);
    let received: Awaited<ReturnType<typeof receiveBody>>;
    try {
      const { bodyIdleTimeoutMs } = this.options;
      received = await receiveBody(
        body,
        staged,
        this.options.maxArtifactBytes,
        bodyIdleTimeoutMs ? { idleTimeoutMs: bodyIdleTimeoutMs } : {},
      );
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        throw new ApiError("file_size_exceeded", {
          detail: `The artifact ${name} is larger than ${this.options.maxArtifactBytes} bytes.`,
          fix: "Keep artifacts small: compress logs and videos, or keep only what helps to debug a failure.",
          extra: { limit_bytes: this.options.maxArtifactBytes },
        });
      }
      throw error;
    }
    const blobKey = `artifacts/${run.executionId}/${newId("art")}`;
    try {
      await this.options.store.putFile(blobKey, staged);
    } finally {
      await rm(staged, { force: true });
    }
    const replaced = await this.options.results.putArtifact({
      deviceRunId: run.deviceRunId,
      attempt: run.attempt,
      name,
      executionId: run.executionId,
      sizeBytes: received.size,
      sha256: received.sha256.toString("hex"),
      contentType,
      blobKey,
      createdAt: isoTime(this.options.clock.now()),
    });
    if (replaced) await this.options.store.delete(replaced);
    this.changed(run);
    return {
      name,
      size_bytes: received.size,
      sha256: received.sha256.toString("hex"),
      created: replaced === undefined,
    };
  }

  async complete(
    organizationId: string,
    leaseId: string,
    status: FinalStatus,
    reason: string | null,
    setupMs?: number,
  ) {
    // Before the end, while the lease still names the run (a re-queued run's next claim clears it).
    if (setupMs !== undefined) await this.options.runs.recordSetup(organizationId, leaseId, setupMs);
    const done = await this.options.runs.complete(
      organizationId,
      leaseId,
      status,
      reason,
      this.options.clock.now(),
    );
    if (!done) throw leaseLost(leaseId);
    if (!done.requeued) {
      const ended = { organizationId, executionId: done.executionId, status: done.status, reason };
      for (const listener of this.endListeners) await listener(ended);
    }
    this.options.changes?.changed(organizationId, done.executionId);
    // A re-queued run waits for a claim; batches handed back wait for the shards still running (their next
    // next-batch takes them) or, if none is left, for the run's next attempt.
    if (done.requeued || done.batchesReturned > 0) this.options.signal.notify(organizationId);
    return { status: done.status, requeued: done.requeued, execution_status: done.executionStatus };
  }

  /**
   * A shard lists its step's tests (POST …/steps/{step_index}/tests): the first listing of the step makes its
   * plan, later ones are compared with it (the plan stands). `log` hears of a listing that differs.
   */
  async listTests(
    organizationId: string,
    leaseId: string,
    stepIndex: number,
    tests: readonly ListedTest[],
    log: (message: string, details: Record<string, unknown>) => void,
  ) {
    const result = await this.options.runs.shards.list(
      organizationId,
      leaseId,
      stepIndex,
      tests,
      isoTime(this.options.clock.now()),
    );
    switch (result.outcome) {
      case "lease_lost":
        throw leaseLost(leaseId);
      case "not_splittable":
        throw new ApiError("invalid_request", {
          reason: "step_not_sharded",
          detail:
            result.stepType === null
              ? `The plan has no step ${stepIndex}.`
              : `Step ${stepIndex} is a ${result.stepType} step: only instrumentation, xcuitest and maestro steps split their tests over shards.`,
          fix: "List tests only for the job's instrumentation, xcuitest and maestro steps, by their index in plan.steps.",
        });
      case "not_on_shard":
        throw new ApiError("invalid_request", {
          reason: "step_not_on_shard",
          detail: `Step ${stepIndex} runs on ${result.stepShards} shard(s); this device run is shard ${result.shard}.`,
          fix: "Skip a step on the shards at or above its own shards (device_run.shard ≥ the step's shards): the lower shards run its tests.",
        });
    }
    const { outcome: _, ...answer } = result;
    if (answer.differs) {
      log("a shard listed other tests than the step's plan was made from: the plan stands", {
        lease_id: leaseId,
        step_index: stepIndex,
        listed: tests.length,
        planned: answer.tests,
      });
    }
    return answer;
  }

  /**
   * A shard asks for its next batch of a step's tests, having finished `finishedBatchId` (POST …/next-batch);
   * `take` false: it only finishes that batch.
   */
  async nextBatch(
    organizationId: string,
    leaseId: string,
    stepIndex: number,
    finishedBatchId: string | null,
    take = true,
  ) {
    const result = take
      ? await this.options.runs.shards.next(organizationId, leaseId, stepIndex, finishedBatchId)
      : await this.options.runs.shards.finish(organizationId, leaseId, finishedBatchId);
    switch (result.outcome) {
      case "lease_lost":
        throw leaseLost(leaseId);
      case "plan_missing":
        throw new ApiError("shard_plan_missing", {
          detail: `Step ${stepIndex} of this job's device entry was never listed: there are no batches to take.`,
        });
    }
    return { batch: result.batch };
  }

  /** The agents that serve the organization (GET /agents): its own and the fleet agents (AgentsRepo.list). */
  async list(organizationId: string) {
    return { items: await this.options.seen.list(organizationId, this.options.clock.now()) };
  }

  /** Re-queues runs whose agents stopped renewing their leases, and wakes agents for them. */
  async sweep(): Promise<number> {
    const woken = await this.options.runs.expireLapsed(this.options.clock.now());
    for (const organizationId of woken) {
      this.options.signal.notify(organizationId);
      // Which executions the lapsed leases belonged to is not known here: their dashboards read again.
      this.options.changes?.changed(organizationId);
    }
    return woken.size;
  }

  /** Puts back a claimed run whose agent went away before it got the answer (see DeviceRuns.release). */
  async release(organizationId: string, leaseId: string): Promise<void> {
    if (await this.options.runs.release(organizationId, leaseId, this.options.clock.now())) {
      this.options.signal.notify(organizationId);
      this.options.changes?.changed(organizationId);
    }
  }

  /** Ends every waiting claim (they answer 204) so the server can close without waiting 30 s. */
  async close(): Promise<void> {
    this.closing = true;
    await this.options.signal.close();
  }

  /**
   * Records the agent as seen with what it offers. An agent draining the queue claims many times a second with
   * the same offer: written again only when the offer changed or `seenRefreshMs` passed since this instance
   * last wrote it, far inside the online window (AgentsRepo's onlineWindowMs, 75 s), so GET /agents shows the
   * same agents, offers and online states, with a last_seen_at at most that much older.
   */
  private async seen(request: AgentClaim): Promise<void> {
    const now = this.options.clock.now();
    const key = `${request.organizationId}\u0000${request.agentId}`;
    const appium = request.appium ?? null;
    const serves = request.allOrganizations ? "all_organizations" : "own_organization";
    const offer = JSON.stringify([
      request.stepTypes,
      request.devices,
      request.drainedDevices ?? [],
      appium,
      serves,
    ]);
    const last = this.lastSeen.get(key);
    if (last && last.offer === offer && now >= last.at && now - last.at < seenRefreshMs) return;
    await this.options.seen.seen(
      request.organizationId,
      request.agentId,
      request.stepTypes,
      request.devices,
      request.drainedDevices ?? [],
      appium,
      serves,
      now,
    );
    // One entry per agent of the organizations this instance serves: a few hundred at most.
    this.lastSeen.set(key, { offer, at: now });
  }

  private changed(run: LeasedRun): void {
    this.options.changes?.changed(run.organizationId, run.executionId);
  }

  /**
   * Calls `listener` (awaited before the completion is answered) with each run its agent completes for good.
   * Returns the function that stops it.
   */
  onRunEnded(listener: (ended: EndedRun) => Promise<void>): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /**
   * A file of the version the lease's run tests (API.md §14), for its agent: 409 lease_lost unless the lease is
   * held in this organization, 404 version_file_not_found unless that version has the file.
   */
  async versionFile(organizationId: string, leaseId: string, name: string) {
    const run = await this.held(organizationId, leaseId);
    const file = await this.options.versionFiles.ofExecution(run.executionId, name);
    return { file, open: (range?: ByteRange) => this.options.versionFiles.read(file, range) };
  }

  /**
   * The binary or test package of the version a lease's run tests, while the lease is held (409 otherwise): an
   * --all-orgs agent's downloads (jobFor).
   */
  async leasedFile(organizationId: string, leaseId: string, which: "binary" | "testPackage") {
    await this.held(organizationId, leaseId);
    const file = (await this.options.runs.leasedFiles(leaseId))?.[which];
    if (!file) {
      throw new ApiError(which === "binary" ? "app_version_not_found" : "test_package_not_found", {
        detail: `The run of lease ${leaseId} has no ${which === "binary" ? "binary" : "test package"}.`,
      });
    }
    return { file, open: (range?: ByteRange) => this.options.store.read(file.blobKey, range) };
  }

  /** The run a lease holds, for what other features take from agents by lease (a session's report); else 409. */
  leased(organizationId: string, leaseId: string): Promise<LeasedRun> {
    return this.held(organizationId, leaseId);
  }

  private async held(organizationId: string, leaseId: string): Promise<HeldRun> {
    const run = await this.options.runs.current(organizationId, leaseId);
    if (!run) throw leaseLost(leaseId);
    return run;
  }

  /** The job of a claimed run (API.md §7): the claim read all of it in its own statement. */
  private jobFor(run: ClaimedRun & RunShard, files: readonly VersionFileRecord[], byLease = false) {
    const base = this.options.publicUrl ?? "/v1";
    // An --all-orgs agent may hold another organization's run, whose app its client cannot name: it downloads
    // by lease (API.md §15).
    const lease = `${base}/agent/jobs/${encodeURIComponent(run.leaseId)}`;
    // A WebDriver session without a registered app (API.md §12) has no version: nothing to install.
    const versionPath =
      run.packageName === null || run.version === null
        ? null
        : `/apps/${encodeURIComponent(run.packageName)}/versions/${encodeURIComponent(run.version)}`;
    return {
      lease_id: run.leaseId,
      lease_expires_at: run.leaseExpiresAt,
      lease_ttl_seconds: this.options.leaseTtlSeconds,
      execution_id: run.executionId,
      device_run: {
        id: run.deviceRunId,
        position: run.position,
        attempt: run.attempt,
        max_attempts: run.maxAttempts,
        shard: run.shard,
        shard_count: run.shardCount,
      },
      plan: run.plan,
      package_name: run.packageName,
      version: run.version,
      env: run.env,
      binary_url: versionPath === null ? null : byLease ? `${lease}/binary` : `${base}${versionPath}/binary`,
      binary: run.binary && {
        sha256: run.binary.sha256,
        size_bytes: run.binary.sizeBytes,
        metadata: run.binary.metadata,
      },
      test_package:
        versionPath !== null && run.testPackage
          ? {
              url: byLease ? `${lease}/test-package` : `${base}${versionPath}/test-package/binary`,
              ...testPackageContent(run.testPackage.test),
              sha256: run.testPackage.sha256,
              size_bytes: run.testPackage.sizeBytes,
            }
          : null,
      // Downloaded by lease, not by app and version: only the agent holding this run may read them.
      version_files: files.map((file) => ({
        name: file.name,
        size_bytes: file.sizeBytes,
        sha256: file.sha256,
        url: `${base}/agent/jobs/${encodeURIComponent(run.leaseId)}/files/${encodeURIComponent(file.name)}`,
      })),
      device: run.device,
      device_entry: run.deviceEntry,
    };
  }
}

function leaseLost(leaseId: string): ApiError {
  return new ApiError("lease_lost", {
    detail: `Lease ${leaseId} is not held: it expired and its run was re-queued, or the run already ended.`,
  });
}
