import type { Kysely } from "kysely";

/**
 * Failure groups (API.md §16, features/failures): a failed or errored test case's signature, computed in code
 * when the case is stored (features/failures/failure-signature.ts, called by device-runs/test-cases-query.ts),
 * so grouping costs its insert no extra statement. Null for passed and skipped cases, and for failures stored
 * before this migration: groups start from the cases recorded after it.
 *
 * The partial index holds only the failed cases: listing the groups reads it and not the whole table (with
 * device_run_id, the join to the run and its execution needs no look-up in test_cases); a group's occurrences
 * are an index range on its signature.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("test_cases").addColumn("failure_signature", "text").execute();
  await db.schema
    .createIndex("test_cases_failure_signature_idx")
    .on("test_cases")
    .columns(["failure_signature", "device_run_id"])
    .where("failure_signature", "is not", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("test_cases_failure_signature_idx").execute();
  await db.schema.alterTable("test_cases").dropColumn("failure_signature").execute();
}
