import type { Kysely } from "kysely";

/**
 * Fleet agents (API.md §15 "Fair share, limits and priorities"): `agents.all_organizations` (1 or 0) says that the
 * agent's last claim came from an agent client made with `--all-orgs` (`clients.all_organizations`, migration
 * 0032). Such an agent serves every organization, so GET /agents and waiting_reason of every organization list it
 * (features/agent/agents.repo.ts), not only those of the organization its client belongs to. Every claim writes it
 * again with the rest of the row: rows written before this migration read 0 until their agent's next claim, at most
 * one claim long-poll (30 s) later.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("agents")
    .addColumn("all_organizations", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("agents").dropColumn("all_organizations").execute();
}
