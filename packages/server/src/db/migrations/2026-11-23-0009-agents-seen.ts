import type { Kysely } from "kysely";

/**
 * The agents an organization has seen (GET /agents, waiting_reason): each claim upserts its row with what
 * the agent offered, each heartbeat renews `last_seen_at`. Keyed by the id the agent reports, per
 * organization, since two organizations may well run agents with the same host name.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("agents")
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("last_seen_at", "text", (c) => c.notNull())
    // Sorted and comma-joined, like device_runs.needs: "inspect,shell".
    .addColumn("step_types", "text", (c) => c.notNull())
    // The devices free at the agent's last claim, as JSON [{serial, platform, model, os_version}].
    .addColumn("devices", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("agents_pk", ["organization_id", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("agents").execute();
}
