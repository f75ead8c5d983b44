import type { Kysely } from "kysely";

/**
 * `client rotate` and `client enable` refuse the tokens issued before them (a leaked secret or a disabled
 * client's tokens must not come back), so a client remembers the time before which its tokens are void.
 * A deleted version stays as a row (executions refer to it by a foreign key, and keep their records): it is
 * marked deleted, and its name is freed so that the same version can be uploaded again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("clients").addColumn("tokens_not_before", "text").execute();
  await db.schema.alterTable("app_versions").addColumn("deleted_at", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("app_versions").dropColumn("deleted_at").execute();
  await db.schema.alterTable("clients").dropColumn("tokens_not_before").execute();
}
