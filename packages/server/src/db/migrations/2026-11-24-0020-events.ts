import type { Kysely } from "kysely";

/**
 * The event outbox (issue 15's test.flaky_detected; issue 17's webhooks deliver from it): one row per thing
 * that happened, appended in the same transaction as the change that caused it, so an event exists exactly
 * when its change does. Rows are only ever added. Readers take an organization's events in the order they
 * happened, so the index ends in the keyset (created_at, id) as for every other list.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("subject_id", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("events_org_created_idx")
    .on("events")
    .columns(["organization_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("events").execute();
}
