import type { Kysely } from "kysely";

/**
 * A name for each client (issue 25: runs said "Triggered by client cl_01M8…"), set with `testbay-server client
 * create --name` or POST /v1/clients; null for clients made without one. The clients a first start makes and
 * the built-in local agent's are named at start, not here: which clients those are is written in the data
 * dir (credentials.json, local-agent.json), which the database does not know (features/clients/bootstrap.ts,
 * features/agent/local-agent.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("clients").addColumn("name", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("clients").dropColumn("name").execute();
}
