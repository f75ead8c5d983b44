import type { Kysely } from "kysely";
import { isoTime } from "../../clock.ts";
import type { Dialect } from "../../db/kysely.ts";
import type { Database, ExecutionStatus } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import {
  attemptStatus,
  type FinalStatus,
  type ResultsRepo,
  runnableSets,
  settleExecution,
} from "../executions/index.ts";

/**
 * An agent that shuts down hands its runs back (errored, reason agent_shutdown), and a run whose device
 * vanished mid-run (adb lost it: reason device_lost) is an infrastructure error: neither says anything about
 * the app, so the run is queued again even past the plan's max_attempts, up to this many attempts in all.
 */
const maxAttemptsWithHandBacks = 10;

const handBackReasons = new Set(["agent_shutdown", "device_lost"]);

function handedBack(status: FinalStatus, reason: string | null, held: LeasedRun): boolean {
  return status === "errored" && reason !== null && handBackReasons.has(reason) && !held.cancelRequested;
}

/** A device the agent offers in a claim: one it has free right now. */
export interface AgentDevice {
  serial: string;
  platform: string;
  model: string;
  os_version: string;
}

export interface ClaimRequest {
  organizationId: string;
  agentId: string;
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
}

export interface Completion {
  executionId: string;
  status: FinalStatus;
  /** The run goes back to the queue for another attempt. */
  requeued: boolean;
  /** The execution's status once this attempt was counted. */
  executionStatus: ExecutionStatus;
}

const leasedColumns = [
  "device_runs.id as device_run_id",
  "device_runs.execution_id as execution_id",
  "device_runs.organization_id as organization_id",
  "device_runs.position as position",
  "device_runs.attempt as attempt",
  "device_runs.max_attempts as max_attempts",
  "device_runs.lease_id as lease_id",
  "device_runs.lease_expires_at as lease_expires_at",
  "device_runs.claimed_device as claimed_device",
  "executions.cancel_requested as cancel_requested",
] as const;

/**
 * Leases on device runs: claims, renewals, completions and the expiry of leases nobody renews. Every
 * change is a conditional update on the lease it expects, inside one transaction with the execution's
 * settlement, so a claim racing a cancel, or a sweep racing a heartbeat, has exactly one effect.
 */
export class LeasesRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly results: ResultsRepo,
  ) {}

  /** Takes the oldest queued run this agent can do, or returns undefined when there is none. */
  async claim(request: ClaimRequest, now: number, ttlMs: number): Promise<LeasedRun | undefined> {
    const runnable = runnableSets(request.stepTypes);
    // Nothing to offer; and `in ()` is a syntax error on PostgreSQL.
    if ((!request.host && request.devices.length === 0) || runnable.length === 0) return undefined;
    const at = isoTime(now);
    return this.db.transaction().execute(async (trx) => {
      let query = trx
        .selectFrom("device_runs")
        .select([
          "id",
          "execution_id",
          "position",
          "attempt",
          "max_attempts",
          "required_platform",
          "required_model",
          "required_os_version",
        ])
        .where("organization_id", "=", request.organizationId)
        .where("status", "=", "queued")
        .where("needs", "in", runnable)
        .where((eb) =>
          eb.or([
            ...(request.host ? [eb("required_platform", "is", null)] : []),
            ...request.devices.map((device) =>
              eb.and([
                eb("required_platform", "=", device.platform),
                eb.or([eb("required_model", "is", null), eb("required_model", "=", device.model)]),
                eb.or([
                  eb("required_os_version", "is", null),
                  eb("required_os_version", "=", device.os_version),
                ]),
              ]),
            ),
          ]),
        )
        .orderBy("created_at")
        .orderBy("id")
        .limit(1);
      // SQLite transactions here begin IMMEDIATE (one writer at a time); PostgreSQL needs the row lock, and
      // SKIP LOCKED lets concurrent claims take the next run instead of queueing behind this one.
      if (this.dialect === "postgres") query = query.forUpdate().skipLocked();
      const run = await query.executeTakeFirst();
      if (!run) return undefined;
      const device =
        run.required_platform === null
          ? null
          : (request.devices.find(
              (d) =>
                d.platform === run.required_platform &&
                (run.required_model === null || d.model === run.required_model) &&
                (run.required_os_version === null || d.os_version === run.required_os_version),
            ) ?? null);
      const leaseId = newId("ls", now);
      const leaseExpiresAt = new Date(now + ttlMs).toISOString();
      const taken = await trx
        .updateTable("device_runs")
        .set({
          status: "running",
          lease_id: leaseId,
          lease_expires_at: leaseExpiresAt,
          agent_id: request.agentId,
          claimed_device: device === null ? null : JSON.stringify(device),
          started_at: at,
          finished_at: null,
          reason: null,
        })
        .where("id", "=", run.id)
        .where("status", "=", "queued")
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 0) return undefined;
      const attempt = Number(run.attempt);
      await trx
        .insertInto("device_run_attempts")
        .values({
          device_run_id: run.id,
          attempt,
          lease_id: leaseId,
          agent_id: request.agentId,
          device: device === null ? null : JSON.stringify(device),
          status: "running",
          reason: null,
          summary: null,
          started_at: at,
          finished_at: null,
        })
        .execute();
      await settleExecution(trx, this.results, run.execution_id, at);
      return {
        leaseId,
        leaseExpiresAt,
        deviceRunId: run.id,
        executionId: run.execution_id,
        organizationId: request.organizationId,
        position: Number(run.position),
        attempt,
        maxAttempts: Number(run.max_attempts ?? 1),
        device,
        cancelRequested: false,
      };
    });
  }

  /**
   * Undoes a claim whose answer never reached its agent (it hung up while the claim was being granted: an
   * agent ends its long poll when its devices change). The run goes back to the queue as if never claimed,
   * attempt and all, instead of waiting out a lease nobody holds and then counting as a lost attempt.
   */
  async release(organizationId: string, leaseId: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const held = await this.current(organizationId, leaseId, trx);
      if (!held) return false;
      await trx
        .deleteFrom("device_run_attempts")
        .where("device_run_id", "=", held.deviceRunId)
        .where("lease_id", "=", leaseId)
        .execute();
      await trx
        .updateTable("device_runs")
        .set({
          status: "queued",
          lease_id: null,
          lease_expires_at: null,
          claimed_device: null,
          ...(held.attempt === 1 ? { started_at: null, agent_id: null } : {}),
        })
        .where("id", "=", held.deviceRunId)
        .where("lease_id", "=", leaseId)
        .execute();
      await settleExecution(trx, this.results, held.executionId, isoTime(now));
      return true;
    });
  }

  /** The run a lease holds, while it holds it (running, lease not replaced), in the organization. */
  async current(
    organizationId: string,
    leaseId: string,
    db: Kysely<Database> = this.db,
  ): Promise<LeasedRun | undefined> {
    const row = await db
      .selectFrom("device_runs")
      .innerJoin("executions", "executions.id", "device_runs.execution_id")
      .select(leasedColumns)
      .where("device_runs.lease_id", "=", leaseId)
      .where("device_runs.organization_id", "=", organizationId)
      .where("device_runs.status", "=", "running")
      .executeTakeFirst();
    return row ? toLeasedRun(row) : undefined;
  }

  /** Extends a lease; undefined when it is no longer held (expired and swept, or completed). */
  async renew(
    organizationId: string,
    leaseId: string,
    now: number,
    ttlMs: number,
  ): Promise<LeasedRun | undefined> {
    const leaseExpiresAt = new Date(now + ttlMs).toISOString();
    const renewed = await this.db
      .updateTable("device_runs")
      .set({ lease_expires_at: leaseExpiresAt })
      .where("lease_id", "=", leaseId)
      .where("organization_id", "=", organizationId)
      .where("status", "=", "running")
      .executeTakeFirst();
    if (Number(renewed.numUpdatedRows) === 0) return undefined;
    return this.current(organizationId, leaseId);
  }

  /**
   * Ends an attempt. A failed or errored attempt goes back to the queue while the plan allows more
   * attempts (and nobody asked to cancel); otherwise the run ends with this attempt's status.
   */
  async complete(
    organizationId: string,
    leaseId: string,
    reported: FinalStatus,
    reason: string | null,
    now: number,
  ): Promise<Completion | undefined> {
    const at = isoTime(now);
    return this.db.transaction().execute(async (trx) => {
      const held = await this.current(organizationId, leaseId, trx);
      if (!held) return undefined;
      const summary = await this.results.attemptSummary(held, trx);
      const status = held.cancelRequested ? "cancelled" : attemptStatus(reported, summary);
      const requeued = handedBack(status, reason, held)
        ? held.attempt < maxAttemptsWithHandBacks
        : (status === "failed" || status === "errored") && held.attempt < held.maxAttempts;
      await this.endAttempt(trx, held, status, reason, JSON.stringify(summary), at, requeued);
      const execution = await trx
        .selectFrom("executions")
        .select("status")
        .where("id", "=", held.executionId)
        .executeTakeFirstOrThrow();
      return { executionId: held.executionId, status, requeued, executionStatus: execution.status };
    });
  }

  /**
   * Re-queues (or, after the last attempt, errors with agent_lost) every run whose lease lapsed. Safe to run
   * from several instances at once: each run changes only if its lease is still the lapsed one.
   * Returns the organizations that got work back, to wake their agents.
   */
  async expireLapsed(now: number, limit = 100): Promise<Set<string>> {
    const at = isoTime(now);
    const lapsed = await this.db
      .selectFrom("device_runs")
      .select("lease_id")
      .where("status", "=", "running")
      .where("lease_expires_at", "<", at)
      .limit(limit)
      .execute();
    const woken = new Set<string>();
    for (const { lease_id: leaseId } of lapsed) {
      if (leaseId === null) continue;
      await this.db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom("device_runs")
          .innerJoin("executions", "executions.id", "device_runs.execution_id")
          .select([...leasedColumns])
          .where("device_runs.lease_id", "=", leaseId)
          .where("device_runs.status", "=", "running")
          .where("device_runs.lease_expires_at", "<", at)
          .executeTakeFirst();
        const held = row && toLeasedRun(row);
        if (!held) return;
        const cancelled = held.cancelRequested;
        const requeued = !cancelled && held.attempt < held.maxAttempts;
        const summary = JSON.stringify(await this.results.attemptSummary(held, trx));
        const status = cancelled ? "cancelled" : "errored";
        await this.endAttempt(trx, held, status, "agent_lost", summary, at, requeued);
        if (requeued) woken.add(held.organizationId);
      });
    }
    return woken;
  }

  private async endAttempt(
    trx: Kysely<Database>,
    held: LeasedRun,
    status: FinalStatus,
    reason: string | null,
    summary: string,
    at: string,
    requeued: boolean,
  ): Promise<void> {
    await trx
      .updateTable("device_run_attempts")
      .set({ status, reason, summary, finished_at: at })
      .where("device_run_id", "=", held.deviceRunId)
      .where("attempt", "=", held.attempt)
      .execute();
    await trx
      .updateTable("device_runs")
      .set(
        requeued
          ? {
              status: "queued",
              attempt: held.attempt + 1,
              lease_id: null,
              lease_expires_at: null,
              claimed_device: null,
              reason,
              summary,
            }
          : {
              status,
              lease_id: null,
              lease_expires_at: null,
              reason,
              summary,
              finished_at: at,
            },
      )
      .where("id", "=", held.deviceRunId)
      .where("lease_id", "=", held.leaseId)
      .execute();
    await settleExecution(trx, this.results, held.executionId, at);
  }
}

type LeasedRow = {
  device_run_id: string;
  execution_id: string;
  organization_id: string | null;
  position: number;
  attempt: number;
  max_attempts: number | null;
  lease_id: string | null;
  lease_expires_at: string | null;
  claimed_device: string | null;
  cancel_requested: number;
};

/** A row of `leasedColumns` as the lease holder sees it; undefined when it holds no lease. */
function toLeasedRun(row: LeasedRow): LeasedRun | undefined {
  if (row.lease_id === null || row.lease_expires_at === null || row.organization_id === null)
    return undefined;
  return {
    leaseId: row.lease_id,
    leaseExpiresAt: row.lease_expires_at,
    deviceRunId: row.device_run_id,
    executionId: row.execution_id,
    organizationId: row.organization_id,
    position: Number(row.position),
    attempt: Number(row.attempt),
    maxAttempts: Number(row.max_attempts ?? 1),
    device: row.claimed_device === null ? null : (JSON.parse(row.claimed_device) as AgentDevice),
    cancelRequested: Number(row.cancel_requested) === 1,
  };
}
