import type { Kysely } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("executions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    // No foreign key: executions outlive the plans they ran (deleted plans are purged after 30 days).
    .addColumn("test_plan_id", "text", (c) => c.notNull())
    .addColumn("app_version_id", "text", (c) => c.notNull().references("app_versions.id"))
    .addColumn("package_name", "text", (c) => c.notNull())
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    // What the plan was when triggered (JSON), so editing the plan later does not change a run in flight.
    .addColumn("plan", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("summary", "text", (c) => c.notNull())
    .addColumn("cancel_requested", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("triggered_by", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("started_at", "text")
    .addColumn("finished_at", "text")
    .execute();
  // One index per list filter, each ending in the keyset (created_at, id), so every filtered page is an
  // index range scan whatever the table's size.
  for (const [name, columns] of [
    ["executions_org_created_idx", ["organization_id", "created_at", "id"]],
    ["executions_org_plan_idx", ["organization_id", "test_plan_id", "created_at", "id"]],
    ["executions_org_status_idx", ["organization_id", "status", "created_at", "id"]],
    ["executions_org_package_idx", ["organization_id", "package_name", "version", "created_at", "id"]],
  ] as const) {
    await db.schema
      .createIndex(name)
      .on("executions")
      .columns([...columns])
      .execute();
  }

  await db.schema
    .createTable("device_runs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("execution_id", "text", (c) => c.notNull().references("executions.id"))
    .addColumn("position", "integer", (c) => c.notNull())
    // The plan's device entry (JSON), or null for a plan with devices: [] (runs on the agent host).
    .addColumn("device", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("started_at", "text")
    .addColumn("finished_at", "text")
    .execute();
  await db.schema
    .createIndex("device_runs_execution_idx")
    .on("device_runs")
    .columns(["execution_id", "position"])
    .execute();
  await db.schema
    .createIndex("device_runs_status_idx")
    .on("device_runs")
    .columns(["status", "created_at"])
    .execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("client_id", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    // Null while the first request is still being handled.
    .addColumn("status_code", "integer")
    .addColumn("content_type", "text")
    .addColumn("body", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["client_id", "key"])
    .execute();
  await db.schema
    .createIndex("idempotency_keys_expires_idx")
    .on("idempotency_keys")
    .column("expires_at")
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("idempotency_keys").execute();
  await db.schema.dropTable("device_runs").execute();
  await db.schema.dropTable("executions").execute();
}
