import type { Kysely } from "kysely";

/**
 * Version files (API.md §14, issue 29): files a version's tests need on the device (extra APKs, fixtures to
 * push), uploaded beside the build by name. A name is unique within its version, so the key is (version,
 * name): of two concurrent uploads of one name, the insert that commits the second finds the first's row and
 * answers 409, as test_packages' key decides between concurrent test package uploads (migration 0008).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("version_files")
    .addColumn("app_version_id", "text", (c) => c.notNull().references("app_versions.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("size_bytes", "bigint", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    // A key the server made up, as for test_packages.blob_key; unique so the start-up sweep can look it up.
    .addColumn("blob_key", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("version_files_pk", ["app_version_id", "name"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("version_files").execute();
}
