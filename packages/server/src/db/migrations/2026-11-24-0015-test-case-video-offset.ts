import type { Kysely } from "kysely";

/**
 * A failed test's video segment is named on it (migration 0010), but not where in that segment it failed: the
 * agent now says how far into the segment (ms), so the run's page opens the video just before the failure.
 * Null when the agent recorded no video or is older than this.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("test_cases").addColumn("video_offset_ms", "integer").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("test_cases").dropColumn("video_offset_ms").execute();
}
