import type { Kysely } from "kysely";

/**
 * People who sign in to the dashboard (API.md §10), and their sessions.
 *
 * `email_folded` is the address in lower case and carries the uniqueness: Ann@Example.com and ann@example.com
 * are one person on SQLite and PostgreSQL alike, while `email` keeps the spelling the account was created with.
 *
 * A session row is keyed by the SHA-256 of its ID, never the ID itself: whoever reads the table (a backup, a
 * replica) cannot sign in with what they read. `last_seen_at` is when the session was last used; it ends 12 h
 * after that (sliding), checked by every instance against this row, so signing out or disabling the person
 * ends it everywhere at once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_folded", "text", (c) => c.notNull().unique())
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("disabled_at", "text")
    .execute();
  await db.schema
    .createIndex("users_organization_id_idx")
    .on("users")
    .columns(["organization_id", "email_folded"])
    .execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id_hash", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_seen_at", "text", (c) => c.notNull())
    .execute();
  // Signing a person out everywhere (password change, disabling) deletes by user.
  await db.schema.createIndex("sessions_user_id_idx").on("sessions").column("user_id").execute();
  // The hourly purge of idle sessions.
  await db.schema.createIndex("sessions_last_seen_at_idx").on("sessions").column("last_seen_at").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("sessions").execute();
  await db.schema.dropTable("users").execute();
}
