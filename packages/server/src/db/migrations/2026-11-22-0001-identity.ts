import type { Kysely } from "kysely";

// Migrations are written against Kysely<any>: they describe the schema as it was on their date, not as the
// current TypeScript types say it is.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("organizations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("clients")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("disabled_at", "text")
    .execute();
  await db.schema
    .createIndex("clients_organization_id_idx")
    .on("clients")
    .columns(["organization_id", "id"])
    .execute();

  await db.schema
    .createTable("signing_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("algorithm", "text", (c) => c.notNull())
    .addColumn("private_key_pem", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("signing_keys").execute();
  await db.schema.dropTable("clients").execute();
  await db.schema.dropTable("organizations").execute();
}
