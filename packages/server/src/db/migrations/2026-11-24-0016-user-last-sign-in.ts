import type { Kysely } from "kysely";

/**
 * When each person last signed in (password or single sign-on), so admins can see who no longer uses their
 * account. Null for people who never did (or did only before this migration).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("users").addColumn("last_sign_in_at", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("users").dropColumn("last_sign_in_at").execute();
}
