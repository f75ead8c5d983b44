import type { Kysely } from "kysely";

/**
 * What an agent started with `--appium` offers (API.md §12, issue 27): its Appium's version and installed drivers
 * as its last claim sent them, JSON text (features/agent/agents.repo.ts), shown by GET /agents. Null for every
 * agent before it and every agent that offers no Appium. A column both databases add and drop in place.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("appium", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("agents").dropColumn("appium").execute();
}
