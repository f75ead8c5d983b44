import type { Kysely } from "kysely";

/**
 * Test packages (API.md §4b): the instrumentation APK uploaded beside a version. A version has at most one,
 * so the version's id is the key: the insert that commits an upload fails for the second of two concurrent
 * uploads, the same way app_versions' unique (app_id, version) decides between concurrent version uploads.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("test_packages")
    .addColumn("app_version_id", "text", (c) => c.primaryKey().references("app_versions.id"))
    .addColumn("format", "text", (c) => c.notNull())
    .addColumn("size_bytes", "bigint", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    // A key the server made up, as for app_versions.blob_key; unique so the start-up sweep can look it up.
    .addColumn("blob_key", "text", (c) => c.notNull().unique())
    // What was parsed from the bytes (runner, target package, SDK levels), as JSON text.
    .addColumn("test", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("test_packages").execute();
}
