/**
 * The sharding protocol's two agent calls (issue 15's shared design, rules 2 and 3), on the database:
 *
 * - `list`: a shard's agent reports the tests its step would run. The first listing of (execution, device
 *   entry, step) makes the step's plan and its batches (shard-listing.ts), atomically: a `shard_plans` row
 *   inserted ON CONFLICT DO NOTHING decides which listing was first; the batches go in the same transaction.
 *   Later listings are compared with the plan, which stands either way.
 * - `next`: marks the batch the agent finished as done and hands it the next one: the lowest queued seq of the
 *   step's shared queue (`duration`) or its own shard's batch (`uniform`). On PostgreSQL one statement, with
 *   SKIP LOCKED so that shards asking at the same moment take different batches.
 *
 * Ending an attempt hands its running batches back (batch-hand-over.ts, inside the end's own statement).
 */
import { type Kysely, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";
import type { Database, ShardingMode } from "../../db/schema.ts";
import { storableDeviceText } from "../../http/storable-text.ts";
import { newId } from "../../ids.ts";
import { expectedDurations } from "./expected-durations.ts";
import { runsOnShard, type ShardableStep, shardingOf, splitsTests, stepShards } from "./plan-shards.ts";
import { type PlannedBatch, planStep, sameTests } from "./shard-listing.ts";
import type { ListedTest } from "./shard-plan.ts";

export type ListingResult =
  | {
      outcome: "listed";
      planned: boolean;
      differs: boolean;
      batches: number;
      tests: number;
      sharding: ShardingMode;
    }
  | { outcome: "lease_lost" }
  /** The step is not one whose tests are split (inspect, shell), or there is no such step. */
  | { outcome: "not_splittable"; stepType: string | null }
  /** The step runs on fewer shards than this run's (rule 1): it does not run here. */
  | { outcome: "not_on_shard"; shard: number; stepShards: number };

export type NextBatchResult =
  | { outcome: "batch"; batch: { id: string; tests: ListedTest[] } | null }
  | { outcome: "lease_lost" }
  /** The step was never listed: there is no plan to take batches of. */
  | { outcome: "plan_missing" };

type ListingRow = {
  device_run_id: string;
  execution_id: string;
  position: number;
  shard: number;
  test_plan_id: string;
  plan: string;
  sharding: ShardingMode | null;
  planned_tests: string | null;
  batch_count: number | null;
  test_count: number | null;
};

type NextRow = {
  held: number | string;
  planned: number | string;
  batch_id: string | null;
  batch_tests: string | null;
};

/** Batch rows per INSERT: 9 values each, far below SQLite's 32,766 bound values per statement. */
const insertChunk = 500;

export class ShardBatches {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** A shard's listing of step `stepIndex`'s tests (POST …/steps/{step_index}/tests). */
  async list(
    organizationId: string,
    leaseId: string,
    stepIndex: number,
    listed: readonly ListedTest[],
    at: string,
  ): Promise<ListingResult> {
    const held = await this.readListing(organizationId, leaseId, stepIndex);
    if (!held) return { outcome: "lease_lost" };
    const steps = (JSON.parse(held.plan) as { steps?: ShardableStep[] }).steps ?? [];
    const step = steps[stepIndex];
    if (!step || !splitsTests(step)) return { outcome: "not_splittable", stepType: step?.type ?? null };
    const shard = Number(held.shard);
    if (!runsOnShard(step, shard)) return { outcome: "not_on_shard", shard, stepShards: stepShards(step) };
    // Stored as test_case events store names, so that a batch's tests and their reports compare equal.
    const tests = listed.map((test) => ({
      classname: storableDeviceText(test.classname),
      name: storableDeviceText(test.name),
    }));
    if (held.planned_tests !== null) return laterListing(held, tests);

    const sharding = shardingOf(step);
    const expected =
      sharding === "duration"
        ? await expectedDurations(this.db, organizationId, held.test_plan_id)
        : new Map<string, number>();
    const plan = planStep(tests, stepShards(step), sharding, expected);
    const made = await this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto("shard_plans")
        .values({
          execution_id: held.execution_id,
          position: Number(held.position),
          step_index: stepIndex,
          sharding,
          shard_count: stepShards(step),
          tests: JSON.stringify(plan.tests),
          test_count: plan.tests.length,
          batch_count: plan.batches.length,
          device_run_id: held.device_run_id,
          created_at: at,
        })
        .onConflict((conflict) => conflict.columns(["execution_id", "position", "step_index"]).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      const rows = plan.batches.map((batch) => batchRow(held, stepIndex, batch, at));
      for (let i = 0; i < rows.length; i += insertChunk) {
        await trx
          .insertInto("test_batches")
          .values(rows.slice(i, i + insertChunk))
          .execute();
      }
      return true;
    });
    if (!made) {
      // Another shard's listing made the plan between the read and the insert: this one is a later listing.
      const again = await this.readListing(organizationId, leaseId, stepIndex);
      if (!again || again.planned_tests === null) return { outcome: "lease_lost" };
      return laterListing(again, tests);
    }
    return {
      outcome: "listed",
      planned: true,
      differs: false,
      batches: plan.batches.length,
      tests: plan.tests.length,
      sharding,
    };
  }

  /**
   * The agent finished `finishedBatchId` (if given and held by this lease) and asks for its next batch of step
   * `stepIndex` (POST …/steps/{step_index}/next-batch). A batch this lease already holds (the answer to an
   * earlier call that did not reach the agent) is handed out again rather than a new one taken.
   */
  async next(
    organizationId: string,
    leaseId: string,
    stepIndex: number,
    finishedBatchId: string | null,
  ): Promise<NextBatchResult> {
    const row =
      this.dialect === "postgres"
        ? await this.nextOnPostgres(organizationId, leaseId, stepIndex, finishedBatchId)
        : await this.nextOnSqlite(organizationId, leaseId, stepIndex, finishedBatchId);
    if (Number(row.held) === 0) return { outcome: "lease_lost" };
    if (row.batch_id !== null && row.batch_tests !== null) {
      return {
        outcome: "batch",
        batch: { id: row.batch_id, tests: JSON.parse(row.batch_tests) as ListedTest[] },
      };
    }
    if (Number(row.planned) === 0) return { outcome: "plan_missing" };
    return { outcome: "batch", batch: null };
  }

  /**
   * The agent finished `finishedBatchId` (if given and held by this lease) and takes no other batch (POST
   * …/next-batch with take: false): its step stops taking batches while the attempt goes on (it ran out of
   * time). A batch taken then would be held, unrun, until the attempt ends, and if every other shard had
   * finished by then nobody would run it. (A cancelled or lost attempt just ends: its end hands back what it
   * did not report.)
   */
  async finish(
    organizationId: string,
    leaseId: string,
    finishedBatchId: string | null,
  ): Promise<NextBatchResult> {
    const run = sql`select 1 from device_runs where lease_id = ${leaseId}
      and organization_id = ${organizationId} and status = 'running'`;
    const done = sql`update test_batches set state = 'done'
      where id = ${finishedBatchId} and lease_id = ${leaseId} and state = 'running' and exists (${run})`;
    const held =
      this.dialect === "postgres"
        ? // One statement: the run's check and the update see one snapshot.
          await sql<{ held: number | string }>`with finished as (${done} returning id)
            select (select count(*) from (${run}) r) as held`.execute(this.db)
        : await this.db.transaction().execute(async (trx) => {
            await done.execute(trx);
            return sql<{ held: number }>`select count(*) as held from (${run}) r`.execute(trx);
          });
    if (Number(held.rows[0]?.held ?? 0) === 0) return { outcome: "lease_lost" };
    return { outcome: "batch", batch: null };
  }

  private async readListing(
    organizationId: string,
    leaseId: string,
    stepIndex: number,
  ): Promise<ListingRow | undefined> {
    const result =
      await sql<ListingRow>`select dr.id as device_run_id, dr.execution_id, dr.position, dr.shard,
        e.test_plan_id, e.plan, sp.sharding, sp.tests as planned_tests, sp.batch_count, sp.test_count
      from device_runs dr join executions e on e.id = dr.execution_id
      left join shard_plans sp on sp.execution_id = dr.execution_id and sp.position = dr.position
        and sp.step_index = ${stepIndex}
      where dr.lease_id = ${leaseId} and dr.organization_id = ${organizationId} and dr.status = 'running'`.execute(
        this.db,
      );
    return result.rows[0];
  }

  private async nextOnPostgres(
    organizationId: string,
    leaseId: string,
    stepIndex: number,
    finishedBatchId: string | null,
  ): Promise<NextRow> {
    const result = await sql<NextRow>`
      with run as (
        select id, execution_id, position, shard from device_runs
        where lease_id = ${leaseId} and organization_id = ${organizationId} and status = 'running'
      ),
      finished as (
        update test_batches set state = 'done'
        where id = ${finishedBatchId} and lease_id = ${leaseId} and state = 'running'
          and exists (select 1 from run)
        returning id
      ),
      mine as (
        select b.id, b.tests from test_batches b join run on b.execution_id = run.execution_id
        where b.lease_id = ${leaseId} and b.state = 'running' and b.step_index = ${stepIndex}
          and b.id is distinct from ${finishedBatchId}
        order by b.seq limit 1
      ),
      taken as (
        update test_batches set state = 'running', lease_id = ${leaseId},
          device_run_id = (select id from run)
        where id = (${takable(stepIndex, leaseId)} for update of b skip locked)
          and not exists (select 1 from mine)
        returning id, tests
      )
      select (select count(*) from run) as held, ${planned(stepIndex)} as planned,
        coalesce((select id from mine), (select id from taken)) as batch_id,
        coalesce((select tests from mine), (select tests from taken)) as batch_tests`.execute(this.db);
    // biome-ignore lint/style/noNonNullAssertion: a SELECT without FROM returns one row
    return result.rows[0]!;
  }

  /** SQLite: the same steps in one IMMEDIATE transaction (one writer at a time, so nothing to skip). */
  private nextOnSqlite(
    organizationId: string,
    leaseId: string,
    stepIndex: number,
    finishedBatchId: string | null,
  ): Promise<NextRow> {
    return this.db.transaction().execute(async (trx) => {
      const run = sql`(select id, execution_id, position, shard from device_runs
        where lease_id = ${leaseId} and organization_id = ${organizationId} and status = 'running') run`;
      const held = await sql<{ id: string }>`select id from ${run}`.execute(trx);
      const runId = held.rows[0]?.id;
      if (runId === undefined) return { held: 0, planned: 0, batch_id: null, batch_tests: null };
      if (finishedBatchId !== null) {
        await sql`update test_batches set state = 'done'
          where id = ${finishedBatchId} and lease_id = ${leaseId} and state = 'running'`.execute(trx);
      }
      const mine = await sql<{ id: string; tests: string }>`select id, tests from test_batches
        where lease_id = ${leaseId} and state = 'running' and step_index = ${stepIndex}
        order by seq limit 1`.execute(trx);
      const found = mine.rows[0];
      if (found) return { held: 1, planned: 1, batch_id: found.id, batch_tests: found.tests };
      const taken = await sql<{ id: string; tests: string }>`update test_batches
        set state = 'running', lease_id = ${leaseId}, device_run_id = ${runId}
        where id = (${takable(stepIndex, leaseId, run)}) returning id, tests`.execute(trx);
      const batch = taken.rows[0];
      if (batch) return { held: 1, planned: 1, batch_id: batch.id, batch_tests: batch.tests };
      const plan = await sql<{ planned: number }>`select ${planned(stepIndex, run)} as planned`.execute(trx);
      return { held: 1, planned: Number(plan.rows[0]?.planned ?? 0), batch_id: null, batch_tests: null };
    });
  }
}

/**
 * The SELECT of the batch a shard takes next: the lowest seq of the step's queue that is its to take (the
 * shared queue's, or its own shard's). Also a batch left running by a lease that no longer holds a running
 * run: an attempt's end hands its batches back, but a next-batch that read its run as running just before
 * that end could still take one after it; such a batch is taken as if queued.
 */
function takable(stepIndex: number, leaseId: string, run = sql`run`) {
  return sql`select b.id from test_batches b join ${run} on b.execution_id = run.execution_id
      and b.position = run.position
    where b.step_index = ${stepIndex} and (b.shard is null or b.shard = run.shard)
      and (b.state = 'queued' or (b.state = 'running' and b.lease_id <> ${leaseId} and not exists (
        select 1 from device_runs d where d.lease_id = b.lease_id and d.status = 'running')))
    order by b.seq limit 1`;
}

/** 1 when the step of the run's device entry has a plan, else 0. */
function planned(stepIndex: number, run = sql`run`) {
  return sql`(select count(*) from shard_plans sp join ${run} on sp.execution_id = run.execution_id
    and sp.position = run.position where sp.step_index = ${stepIndex})`;
}

function batchRow(held: ListingRow, stepIndex: number, batch: PlannedBatch, at: string) {
  return {
    id: newId("tb", Date.parse(at)),
    execution_id: held.execution_id,
    position: Number(held.position),
    step_index: stepIndex,
    seq: batch.seq,
    shard: batch.shard,
    tests: JSON.stringify(batch.tests),
    expected_ms: batch.expectedMs,
    state: "queued" as const,
    device_run_id: null,
    lease_id: null,
  };
}

/** A listing after the plan was made: answered from the plan, which stands even if this one differs. */
function laterListing(held: ListingRow, tests: readonly ListedTest[]): ListingResult {
  const planned = JSON.parse(held.planned_tests ?? "[]") as ListedTest[];
  return {
    outcome: "listed",
    planned: false,
    differs: !sameTests(planned, tests),
    batches: Number(held.batch_count ?? 0),
    tests: Number(held.test_count ?? planned.length),
    sharding: held.sharding ?? "duration",
  };
}
