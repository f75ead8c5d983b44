import type { Kysely } from "kysely";

/**
 * What agents need: leases on device runs, what a run needs from its agent (so a claim is one indexed
 * query), every attempt kept, and the results agents report (steps, test cases, log lines, artifacts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const [column, type] of [
    ["organization_id", "text"],
    // What the run needs from the agent: the plan's device entry split out, and its step types as a sorted,
    // comma-joined set ("inspect,shell"), matched against the subsets of what the agent can run.
    ["required_platform", "text"],
    ["required_model", "text"],
    ["required_os_version", "text"],
    ["needs", "text"],
    ["max_attempts", "integer"],
    ["lease_id", "text"],
    ["lease_expires_at", "text"],
    ["agent_id", "text"],
    ["claimed_device", "text"],
    ["reason", "text"],
    ["summary", "text"],
  ] as const) {
    await db.schema
      .alterTable("device_runs")
      .addColumn(column, type as any)
      .execute();
  }
  await backfillRequirements(db);
  await db.schema
    .createIndex("device_runs_claim_idx")
    .on("device_runs")
    .columns(["organization_id", "status", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("device_runs_lease_expiry_idx")
    .on("device_runs")
    .columns(["status", "lease_expires_at"])
    .execute();
  await db.schema
    .createIndex("device_runs_lease_idx")
    .unique()
    .on("device_runs")
    .column("lease_id")
    .execute();

  await db.schema
    .createTable("device_run_attempts")
    .addColumn("device_run_id", "text", (c) => c.notNull().references("device_runs.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("lease_id", "text", (c) => c.notNull())
    .addColumn("agent_id", "text", (c) => c.notNull())
    .addColumn("device", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("summary", "text")
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("finished_at", "text")
    .addPrimaryKeyConstraint("device_run_attempts_pk", ["device_run_id", "attempt"])
    .execute();

  await db.schema
    .createTable("step_results")
    .addColumn("device_run_id", "text", (c) => c.notNull().references("device_runs.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("step_index", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("message", "text")
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("finished_at", "text")
    .addPrimaryKeyConstraint("step_results_pk", ["device_run_id", "attempt", "step_index"])
    .execute();

  // `seq` is the agent's own numbering within a lease: a batch of events sent twice (a retry after a lost
  // answer) is stored once.
  await db.schema
    .createTable("test_cases")
    .addColumn("device_run_id", "text", (c) => c.notNull().references("device_runs.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("step_index", "integer", (c) => c.notNull())
    .addColumn("classname", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("duration_ms", "integer")
    .addColumn("message", "text")
    .addColumn("details", "text")
    .addPrimaryKeyConstraint("test_cases_pk", ["device_run_id", "attempt", "seq"])
    .execute();

  await db.schema
    .createTable("log_lines")
    .addColumn("device_run_id", "text", (c) => c.notNull().references("device_runs.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("stream", "text", (c) => c.notNull())
    .addColumn("line", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("log_lines_pk", ["device_run_id", "attempt", "seq"])
    .execute();

  await db.schema
    .createTable("artifacts")
    .addColumn("device_run_id", "text", (c) => c.notNull().references("device_runs.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("execution_id", "text", (c) => c.notNull().references("executions.id"))
    .addColumn("size_bytes", "bigint", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("content_type", "text", (c) => c.notNull())
    .addColumn("blob_key", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("artifacts_pk", ["device_run_id", "attempt", "name"])
    .execute();
  await db.schema
    .createIndex("artifacts_execution_idx")
    .on("artifacts")
    .columns(["execution_id", "name"])
    .execute();
}

/** Device runs queued before agents existed get their requirements from their execution's plan. */
async function backfillRequirements(db: Kysely<any>): Promise<void> {
  const rows = await db
    .selectFrom("device_runs")
    .innerJoin("executions", "executions.id", "device_runs.execution_id")
    .select([
      "device_runs.id as id",
      "device_runs.device as device",
      "executions.organization_id as organization_id",
      "executions.plan as plan",
    ])
    .execute();
  for (const row of rows) {
    const device = row.device === null ? null : JSON.parse(row.device);
    const plan = JSON.parse(row.plan);
    const needs = [...new Set<string>(plan.steps.map((s: { type: string }) => s.type))].sort().join(",");
    await db
      .updateTable("device_runs")
      .set({
        organization_id: row.organization_id,
        required_platform: device?.platform ?? null,
        required_model: device?.model ?? null,
        required_os_version: device?.os_version ?? null,
        needs,
        max_attempts: plan.max_attempts ?? 1,
      })
      .where("id", "=", row.id)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["artifacts", "log_lines", "test_cases", "step_results", "device_run_attempts"]) {
    await db.schema.dropTable(table).execute();
  }
  for (const index of ["device_runs_claim_idx", "device_runs_lease_expiry_idx", "device_runs_lease_idx"]) {
    await db.schema.dropIndex(index).execute();
  }
}
