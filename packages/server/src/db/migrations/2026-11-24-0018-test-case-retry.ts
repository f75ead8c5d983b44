import type { Kysely } from "kysely";

/**
 * A device step may rerun a failed test alone on the same device (retry_failed_tests), so one attempt of a
 * device run can hold several results of one test. Each says which try it was: 0 the first run, 1.. the
 * reruns. Null for results of agents older than this, which ran every test once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("test_cases").addColumn("retry", "integer").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("test_cases").dropColumn("retry").execute();
}
