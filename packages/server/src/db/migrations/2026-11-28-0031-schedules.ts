import type { Kysely } from "kysely";

/**
 * Scheduled runs (API.md §15, features/schedules): a plan triggered at the times of a cron expression.
 * `next_run_at` is the next time to fire (ISO UTC, null while disabled). Every instance looks for due rows on its
 * own timer; the one whose `UPDATE … WHERE id = ? AND next_run_at = <the due time it read>` changes the row fires
 * that time, and the others' updates match nothing, so a time fires once however many instances look, as device
 * runs are claimed (features/device-runs/claim-query.ts), with no leader to outlive its instance. The due index
 * keeps that look an index range whatever the number of schedules. A purged plan takes its schedules with it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("schedules")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("test_plan_id", "text", (c) => c.notNull().references("test_plans.id").onDelete("cascade"))
    .addColumn("cron", "text", (c) => c.notNull())
    .addColumn("timezone", "text", (c) => c.notNull())
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("next_run_at", "text")
    .addColumn("last_result", "text")
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("schedules_due_idx").on("schedules").columns(["next_run_at"]).execute();
  await db.schema
    .createIndex("schedules_plan_idx")
    .on("schedules")
    .columns(["test_plan_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("schedules").execute();
}
