import type { Kysely } from "kysely";

/**
 * The agent's own id of the claim that took a run (`claim_id` in POST /v1/agent/claim). An agent stops a
 * long-poll claim whenever its free devices change; if the server granted the run just as the agent hung up,
 * the answer is lost and, without this, the run would sit leased to nobody until its lease lapsed. The agent
 * names such claims in its next ones (`abandoned_claims`) and the server puts their runs back at once
 * (features/device-runs/device-runs.ts releaseAbandoned). Looked up by this index only.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("device_runs").addColumn("claim_id", "text").execute();
  await db.schema.createIndex("device_runs_claim_id_idx").on("device_runs").column("claim_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("device_runs_claim_id_idx").execute();
  await db.schema.alterTable("device_runs").dropColumn("claim_id").execute();
}
