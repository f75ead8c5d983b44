import type { Kysely } from "kysely";

/**
 * Test cases name the artifacts captured for them (the failure's screenshot, its logcat cut, the video), so
 * GET /executions/{id}/tests can put them beside the failure; agents say which of their devices they stopped
 * offering after repeated infrastructure failures (drained), for GET /agents.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // JSON array of artifact names of the same attempt; null when the agent named none.
  await db.schema.alterTable("test_cases").addColumn("artifacts", "text").execute();
  // JSON [{serial, platform, model, os_version}], like devices.
  await db.schema
    .alterTable("agents")
    .addColumn("drained_devices", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("agents").dropColumn("drained_devices").execute();
  await db.schema.alterTable("test_cases").dropColumn("artifacts").execute();
}
