import type { Kysely } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("apps")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("package_name", "text", (c) => c.notNull())
    // Lower-cased package name: finds "com.Example" when "com.example" was asked for (reason case_mismatch).
    .addColumn("package_name_folded", "text", (c) => c.notNull())
    .addColumn("platform", "text", (c) => c.notNull())
    .addColumn("display_name", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addUniqueConstraint("apps_organization_package_unique", ["organization_id", "package_name"])
    .execute();
  await db.schema
    .createIndex("apps_organization_folded_idx")
    .on("apps")
    .columns(["organization_id", "package_name_folded"])
    .execute();
  await db.schema
    .createIndex("apps_organization_created_idx")
    .on("apps")
    .columns(["organization_id", "created_at", "id"])
    .execute();

  await db.schema
    .createTable("app_versions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("app_id", "text", (c) => c.notNull().references("apps.id"))
    .addColumn("version", "text", (c) => c.notNull())
    .addColumn("size_bytes", "bigint", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    // Where the binary lives in the blob store: a key the server made up, never derived from user input.
    .addColumn("blob_key", "text", (c) => c.notNull().unique())
    // The metadata parsed from the binary, as JSON text (same in both dialects).
    .addColumn("binary", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addUniqueConstraint("app_versions_app_version_unique", ["app_id", "version"])
    .execute();
  await db.schema
    .createIndex("app_versions_app_created_idx")
    .on("app_versions")
    .columns(["app_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("app_versions").execute();
  await db.schema.dropTable("apps").execute();
}
