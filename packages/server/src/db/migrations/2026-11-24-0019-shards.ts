import type { Kysely } from "kysely";

/**
 * Sharding (API.md §5 `shards`, `sharding`; issue 15). A device entry of a plan whose steps ask for N shards
 * makes N device runs, each its own device: `shard` (0..N-1) and `shard_count` (N) say which. Existing runs are
 * the one shard of one (the defaults).
 *
 * The agents of a step's shards each list the step's tests; the first listing makes the step's plan: one
 * `shard_plans` row per (execution, device entry position, step index), its primary key what makes "the first"
 * atomic (INSERT … ON CONFLICT DO NOTHING), holding the listed set so that a later listing can be compared.
 * The plan's `test_batches` are what the shards take: `uniform` one batch fixed to each shard, `duration` a
 * queue all shards share (shard null), in `seq` order. A batch is queued, running (held by a lease) or done;
 * when an attempt ends, its batches go back to queued for another shard (features/device-runs/batch-hand-over.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("device_runs")
    .addColumn("shard", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("device_runs")
    .addColumn("shard_count", "integer", (c) => c.notNull().defaultTo(1))
    .execute();

  await db.schema
    .createTable("shard_plans")
    .addColumn("execution_id", "text", (c) => c.notNull().references("executions.id"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("step_index", "integer", (c) => c.notNull())
    .addColumn("sharding", "text", (c) => c.notNull())
    .addColumn("shard_count", "integer", (c) => c.notNull())
    // JSON [{classname, name}]: the distinct tests as first listed, which later listings are compared with.
    .addColumn("tests", "text", (c) => c.notNull())
    .addColumn("test_count", "integer", (c) => c.notNull())
    .addColumn("batch_count", "integer", (c) => c.notNull())
    // The device run whose listing made the plan.
    .addColumn("device_run_id", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("shard_plans_pk", ["execution_id", "position", "step_index"])
    .execute();

  await db.schema
    .createTable("test_batches")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("execution_id", "text", (c) => c.notNull().references("executions.id"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("step_index", "integer", (c) => c.notNull())
    .addColumn("seq", "integer", (c) => c.notNull())
    // uniform: the shard it is fixed to; duration: null (any shard takes it).
    .addColumn("shard", "integer")
    .addColumn("tests", "text", (c) => c.notNull())
    .addColumn("expected_ms", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    // Who runs it (running) or ran it (done); null while queued.
    .addColumn("device_run_id", "text")
    .addColumn("lease_id", "text")
    .execute();
  // next-batch takes the lowest queued seq of one step: a range of this index (a step has tens of batches).
  await db.schema
    .createIndex("test_batches_queue_idx")
    .on("test_batches")
    .columns(["execution_id", "position", "step_index", "seq"])
    .unique()
    .execute();
  // Ending an attempt hands back its lease's batches (running ones; done ones too when the attempt is re-queued).
  // Only a sharded run's end looks (an unsharded run's does not probe it at all).
  await db.schema.createIndex("test_batches_lease_idx").on("test_batches").column("lease_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("test_batches").execute();
  await db.schema.dropTable("shard_plans").execute();
  await db.schema.alterTable("device_runs").dropColumn("shard_count").execute();
  await db.schema.alterTable("device_runs").dropColumn("shard").execute();
}
