import type { Kysely } from "kysely";

/**
 * A fleet shared by organizations (API.md §15 "Fair share, limits and priorities", issue 30):
 * - `clients.all_organizations` (1 or 0): an agent client made with `client create --role agent --all-orgs`
 *   claims the runs of every organization;
 * - `executions.priority` (high, normal, low; normal for every execution before it) and, for the claim's order,
 *   `device_runs.priority_rank` (0 high, 1 normal, 2 low: compared as a number on both databases);
 * - `organizations.max_concurrent_device_runs` (null: no limit) and `organizations.claim_gate`, a counter a claim
 *   of a limited organization bumps, so that two claims cannot both see room for one more run
 *   (features/device-runs/org-limits.ts says how).
 * The claim's index gains the priority between status and age (claim-query.ts orders by priority_rank,
 * created_at, id), and a second index counts an organization's recent starts (fair-share.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("clients")
    .addColumn("all_organizations", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("executions")
    .addColumn("priority", "text", (c) => c.notNull().defaultTo("normal"))
    .execute();
  await db.schema
    .alterTable("device_runs")
    .addColumn("priority_rank", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable("organizations").addColumn("max_concurrent_device_runs", "integer").execute();
  await db.schema
    .alterTable("organizations")
    .addColumn("claim_gate", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.dropIndex("device_runs_claim_idx").execute();
  await db.schema
    .createIndex("device_runs_claim_idx")
    .on("device_runs")
    .columns(["organization_id", "status", "priority_rank", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("device_runs_recent_starts_idx")
    .on("device_runs")
    .columns(["organization_id", "started_at"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("device_runs_recent_starts_idx").execute();
  await db.schema.dropIndex("device_runs_claim_idx").execute();
  await db.schema
    .createIndex("device_runs_claim_idx")
    .on("device_runs")
    .columns(["organization_id", "status", "created_at", "id"])
    .execute();
  await db.schema.alterTable("organizations").dropColumn("claim_gate").execute();
  await db.schema.alterTable("organizations").dropColumn("max_concurrent_device_runs").execute();
  await db.schema.alterTable("device_runs").dropColumn("priority_rank").execute();
  await db.schema.alterTable("executions").dropColumn("priority").execute();
  await db.schema.alterTable("clients").dropColumn("all_organizations").execute();
}
