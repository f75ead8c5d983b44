import type { Kysely } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("test_plans")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("app_id", "text", (c) => c.notNull().references("apps.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    // JSON text in both dialects: read and written whole, never queried into.
    .addColumn("devices", "text", (c) => c.notNull())
    .addColumn("steps", "text", (c) => c.notNull())
    .addColumn("timeout_seconds", "integer", (c) => c.notNull())
    .addColumn("max_attempts", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    // When the plan was archived or deleted; deleted plans are purged 30 days after this.
    .addColumn("state_changed_at", "text")
    .execute();
  await db.schema
    .createIndex("test_plans_organization_created_idx")
    .on("test_plans")
    .columns(["organization_id", "created_at", "id"])
    .execute();
  await db.schema.createIndex("test_plans_app_idx").on("test_plans").columns(["app_id", "state"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("test_plans").execute();
}
