import type { Kysely } from "kysely";

/**
 * Who did what (API.md §10, issue 14): one row per action a person or a machine took on plans, runs, clients
 * or people. Rows are only ever added. GET /v1/audit pages an organization's rows newest first, so the index
 * ends in the keyset (created_at, id) as for every other list.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("audit_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("actor_type", "text", (c) => c.notNull())
    .addColumn("actor_id", "text", (c) => c.notNull())
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("target_type", "text", (c) => c.notNull())
    .addColumn("target_id", "text", (c) => c.notNull())
    .addColumn("details", "text")
    .execute();
  await db.schema
    .createIndex("audit_events_org_created_idx")
    .on("audit_events")
    .columns(["organization_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("audit_events").execute();
}
