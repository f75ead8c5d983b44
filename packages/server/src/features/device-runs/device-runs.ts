/**
 * The life of a device run, in one place: queued (by a trigger), claimed by an agent, its lease renewed,
 * then its attempt ended by the agent (complete), by nobody renewing the lease (expire) or undone (release);
 * re-queued for another attempt or ended; and its execution settled from its runs in the same change. A
 * cancel ends what has not started. Decisions are attempt-outcome.ts's and execution-outcome.ts's (pure);
 * this class reads what they need, asks them, and writes the answer, each change one statement where the
 * database allows (see claim-query.ts, end-attempt-query.ts, settle-query.ts).
 */
import { type Kysely, sql } from "kysely";
import { isoTime } from "../../clock.ts";
import type { Dialect } from "../../db/kysely.ts";
import type { Database, ExecutionStatus } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import type { Meters } from "../metrics/index.ts";
import { appendFlakyDetected } from "../tests/flaky-detected.ts";
import {
  type AttemptEnd,
  type FinalStatus,
  isFinal,
  lapsedEnd,
  reportedEnd,
  sessionEnd,
} from "./attempt-outcome.ts";
import { claimRun } from "./claim-query.ts";
import { flakyOf, writeEnd } from "./end-attempt-query.ts";
import { settleAndAnnounce } from "./execution-events.ts";
import { type HeldRun, readHeld } from "./held-run.ts";
import { leasedFiles } from "./leased-files.ts";
import type { RunShard } from "./plan-shards.ts";
import { ShardBatches } from "./shard-batches.ts";
import { recordStrandedTests } from "./stranded-tests.ts";
import type { Summary } from "./test-summary.ts";
import { attemptSummary } from "./test-summary.ts";
import type { ClaimedRun, ClaimRequest, Completion } from "./types.ts";

/**
 * PostgreSQL ends an attempt without a transaction, writing only if the execution did not change since it
 * was read; a sibling run ending at the same moment makes it read again. After this many tries (many runs of
 * one execution ending at once) it locks instead.
 */
const optimisticTries = 3;

/** An attempt's end, and how many test batches its lease handed back to the queue (batch-hand-over.ts). */
export type Ended = Completion & { batchesReturned: number };

export class DeviceRuns {
  /** A sharded run's steps: listings and batches (shard-batches.ts). */
  readonly shards: ShardBatches;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    /** Told of executions this instance starts and finishes (API.md §15); none without TESTBAY_METRICS. */
    private readonly meters?: Meters,
  ) {
    this.shards = new ShardBatches(db, dialect);
  }

  /** Takes the oldest queued run this agent can do, with its job; undefined when there is none. */
  async claim(
    request: ClaimRequest,
    now: number,
    ttlMs: number,
  ): Promise<(ClaimedRun & RunShard) | undefined> {
    const at = isoTime(now);
    const run = await claimRun(this.db, this.dialect, request, {
      leaseId: newId("ls", now),
      leaseExpiresAt: new Date(now + ttlMs).toISOString(),
      at,
    });
    if (run?.executionQueuedAt)
      this.meters?.executionStarted(run.device?.platform ?? "host", run.executionQueuedAt, at);
    return run;
  }

  /** The run a lease holds, while it holds it (running, lease not replaced), in the organization. */
  current(organizationId: string, leaseId: string): Promise<HeldRun | undefined> {
    return readHeld(this.db, this.dialect, { leaseId, organizationId });
  }

  /** Extends a lease; undefined when it is no longer held (expired and swept, or completed). */
  async renew(
    organizationId: string,
    leaseId: string,
    now: number,
    ttlMs: number,
  ): Promise<{ leaseExpiresAt: string; cancelRequested: boolean } | undefined> {
    const leaseExpiresAt = new Date(now + ttlMs).toISOString();
    const result = await sql<{
      cancel_requested: number;
    }>`update device_runs set lease_expires_at = ${leaseExpiresAt}
      where lease_id = ${leaseId} and organization_id = ${organizationId} and status = 'running'
      returning (select cancel_requested from executions where executions.id = device_runs.execution_id) as cancel_requested`.execute(
      this.db,
    );
    const row = result.rows[0];
    return row && { leaseExpiresAt, cancelRequested: Number(row.cancel_requested) === 1 };
  }

  /**
   * How long the agent took to make the run's device clean before this attempt (API.md §13 `setup_ms`), as it
   * reports it: kept on the run while the lease is held, cleared when a new attempt is claimed.
   */
  async recordSetup(organizationId: string, leaseId: string, setupMs: number): Promise<void> {
    await this.db
      .updateTable("device_runs")
      .set({ setup_ms: setupMs })
      .where("organization_id", "=", organizationId)
      .where("lease_id", "=", leaseId)
      .where("status", "=", "running")
      .execute();
  }

  /**
   * The agent ends its attempt (POST …/complete). Undefined when the lease is no longer held. The lease is
   * read once (with the attempt's test cases), the end decided (reportedEnd), and written with the settled
   * execution's status returned, so nothing is read again.
   */
  async complete(
    organizationId: string,
    leaseId: string,
    reported: FinalStatus,
    reason: string | null,
    now: number,
  ): Promise<Ended | undefined> {
    const at = isoTime(now);
    const decide = (held: HeldRun, summary: Summary) => {
      const end = reportedEnd({ ...held, summary }, reported, reason);
      return held.session ? sessionEnd(end, held.session.result) : end;
    };
    if (this.dialect === "postgres") {
      for (let i = 0; i < optimisticTries; i++) {
        const held = await readHeld(this.db, this.dialect, { leaseId, organizationId, withReports: true });
        if (!held) return undefined;
        const done = await this.end(this.db, held, (summary) => decide(held, summary), reason, at, true);
        // Finishing the execution with flaky tests appends events with it: in the transaction below.
        if (done === "lock") break;
        if (done !== "changed") return done;
      }
    }
    return this.db.transaction().execute(async (trx) => {
      const held = await readHeld(trx, this.dialect, {
        leaseId,
        organizationId,
        withReports: true,
        lock: true,
      });
      if (!held) return undefined;
      const done = await this.end(trx, held, (summary) => decide(held, summary), reason, at, false);
      return done === "changed" || done === "lock" ? undefined : done;
    });
  }

  /**
   * Re-queues (or, after the last attempt, errors with agent_lost) every run whose lease lapsed. Safe to run
   * from several instances at once: each run changes only if its lease is still the lapsed one.
   * Returns the organizations that got work back (a run, or a sharded run's batches), to wake their agents.
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
        const held = await readHeld(trx, this.dialect, {
          leaseId,
          lapsedBefore: at,
          withReports: true,
          lock: true,
        });
        if (!held) return;
        const done = await this.end(
          trx,
          held,
          (summary) => lapsedEnd({ ...held, summary }),
          "agent_lost",
          at,
          false,
        );
        // Agents are woken for a re-queued run, and for batches handed back to shards still running.
        if (done && done !== "changed" && done !== "lock" && (done.requeued || done.batchesReturned > 0)) {
          woken.add(held.organizationId);
        }
      });
    }
    return woken;
  }

  /**
   * Undoes a claim whose answer never reached its agent (it hung up while the claim was being granted: an
   * agent ends its long poll when its devices change). The run goes back to the queue as if never claimed,
   * attempt and all, instead of waiting out a lease nobody holds and then counting as a lost attempt.
   */
  async release(organizationId: string | undefined, leaseId: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const held = await readHeld(trx, this.dialect, { leaseId, organizationId, lock: true });
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
      await settleAndAnnounce(trx, this.dialect, held.executionId, isoTime(now));
      return true;
    });
  }

  /**
   * Puts back the runs that claims this agent gave up on took (ClaimRequest.abandonedClaims): the agent never
   * got their answer, so it runs nothing and never will. A release per run, as for a claim whose agent hung up
   * before the server answered; the organizations whose runs were put back (undefined organizationId: an
   * --all-orgs agent's claims, of any organization).
   */
  async releaseAbandoned(
    organizationId: string | undefined,
    agentId: string,
    claimIds: readonly string[],
    now: number,
  ): Promise<Set<string>> {
    const released = new Set<string>();
    if (claimIds.length === 0) return released;
    let query = this.db
      .selectFrom("device_runs")
      .select(["lease_id", "organization_id"])
      .where("claim_id", "in", claimIds)
      .where("agent_id", "=", agentId)
      .where("status", "=", "running");
    if (organizationId !== undefined) query = query.where("organization_id", "=", organizationId);
    for (const { lease_id: leaseId, organization_id: owner } of await query.execute()) {
      if (leaseId !== null && owner !== null && (await this.release(owner, leaseId, now)))
        released.add(owner);
    }
    return released;
  }

  /** The binary and test package of a running lease's version, for an --all-orgs agent (leased-files.ts). */
  leasedFiles(leaseId: string) {
    return leasedFiles(this.db, leaseId);
  }

  /** The organization of the run a lease holds (an --all-orgs agent's lease calls); undefined when none. */
  async organizationOfLease(leaseId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("device_runs")
      .select("organization_id")
      .where("lease_id", "=", leaseId)
      .executeTakeFirst();
    return row?.organization_id ?? undefined;
  }

  /**
   * Ends an execution's runs that are still queued as errored with `reason` (a WebDriver session that waited
   * out its queue timeout: API.md §12, `queue_timeout`), and settles the execution. False when none was queued
   * (a claim took the run first, or the execution had ended). A run being claimed right now (locked) is skipped.
   */
  async endQueued(organizationId: string, executionId: string, reason: string, at: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const queued = sql`select id from device_runs where execution_id = ${executionId}
        and organization_id = ${organizationId} and status = 'queued'
        ${this.dialect === "postgres" ? sql`for update skip locked` : sql``}`;
      const ended =
        await sql`update device_runs set status = 'errored', finished_at = ${at}, reason = ${reason}
        where id in (${queued})`.execute(trx);
      if (Number(ended.numAffectedRows ?? 0) === 0) return false;
      const settled = await settleAndAnnounce(trx, this.dialect, executionId, at);
      if (settled && isFinal(settled.status as ExecutionStatus))
        this.meters?.executionFinished(settled.status);
      return true;
    });
  }

  /**
   * Cancels an execution: what has not started ends at once, the rest is flagged for its agents (they see
   * cancel_requested at their next heartbeat, and their attempt then ends cancelled). False when the
   * execution had already ended (nothing changed). The flag comes first: it locks the execution, so an
   * attempt ending at the same moment either sees it or has re-queued its run before the queued runs are
   * cancelled. A run being claimed right now (locked) is skipped: it starts, and its agent is told to stop.
   */
  async cancel(organizationId: string, executionId: string, at: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const flagged = await trx
        .updateTable("executions")
        .set({ cancel_requested: 1 })
        .where("id", "=", executionId)
        .where("organization_id", "=", organizationId)
        .where("status", "in", ["queued", "running"])
        .executeTakeFirst();
      if (Number(flagged.numUpdatedRows) === 0) return false;
      const queued = sql`select id from device_runs where execution_id = ${executionId} and status = 'queued'
        ${this.dialect === "postgres" ? sql`for update skip locked` : sql``}`;
      await sql`update device_runs set status = 'cancelled', finished_at = ${at}, reason = 'cancelled'
        where id in (${queued})`.execute(trx);
      const settled = await settleAndAnnounce(trx, this.dialect, executionId, at);
      if (settled && isFinal(settled.status as ExecutionStatus))
        this.meters?.executionFinished(settled.status);
      // Cancelling the queued runs can finish the execution after runs that found flaky tests.
      if (settled && isFinal(settled.status as ExecutionStatus) && flakyOf(settled.summary) > 0) {
        const { test_plan_id: testPlanId } = await trx
          .selectFrom("executions")
          .select("test_plan_id")
          .where("id", "=", executionId)
          .executeTakeFirstOrThrow();
        // A WebDriver session has no plan, hence no test histories to be flaky in.
        if (testPlanId !== null) {
          await appendFlakyDetected(trx, this.dialect, { organizationId, testPlanId, executionId, at });
        }
      }
      return true;
    });
  }

  private async end(
    db: Kysely<Database>,
    held: HeldRun,
    decide: (summary: Summary) => AttemptEnd,
    reason: string | null,
    at: string,
    optimistic: boolean,
  ): Promise<Ended | "changed" | "lock" | undefined> {
    let summary = attemptSummary(held.reports, held.attempt);
    let end = decide(summary);
    if (held.shardCount > 1 && !end.requeued) {
      // Ending for good can strand a batch nobody is left to run (stranded-tests.ts): recorded in a
      // transaction, where no sibling run starts or ends meanwhile.
      if (optimistic) return "lock";
      const stranded = await recordStrandedTests(db, held, reason ?? end.status);
      if (stranded.length > 0) {
        summary = attemptSummary([...held.reports, ...stranded], held.attempt);
        // Tests that did not run can fail an attempt reported passed, and so send it back to the queue.
        end = decide(summary);
      }
    }
    const written = await writeEnd(db, this.dialect, held, end, reason, summary, at, optimistic);
    if (!written.written) return written.lock ? "lock" : written.changed ? "changed" : undefined;
    // This statement finished the execution (a final execution is never settled again), with flaky tests:
    // the tests that newly turned flaky get test.flaky_detected, in the caller's transaction. The optimistic
    // path never gets here with flaky tests (writeEnd answers `lock`).
    const finished = written.executionStatus && isFinal(written.executionStatus);
    if (finished && written.executionStatus) this.meters?.executionFinished(written.executionStatus);
    if (finished && written.executionFlaky > 0 && held.testPlanId !== undefined) {
      await appendFlakyDetected(db, this.dialect, {
        organizationId: held.organizationId,
        testPlanId: held.testPlanId,
        executionId: held.executionId,
        at,
      });
    }
    return {
      executionId: held.executionId,
      status: end.status,
      requeued: end.requeued,
      executionStatus: written.executionStatus ?? held.executionStatus,
      batchesReturned: written.batchesReturned,
    };
  }
}
