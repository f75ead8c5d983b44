import { type Kysely, PostgresAdapter, sql } from "kysely";

/**
 * Accounts belong to an organization: an email is unique within one organization, no longer across the server
 * (API.md §10: creating a user whose email exists in another organization does not tell so; a consultant
 * working for two teams of one server has an account in each). The uniqueness moves from `email_folded` to
 * `(organization_id, email_folded)`, which migration 0013 indexed already (users_organization_id_idx): that
 * index becomes the unique one. Sign-in still looks people up by email alone (features/people/people.repo.ts),
 * so `email_folded` keeps an index of its own, no longer unique.
 *
 * PostgreSQL drops the column's constraint. SQLite cannot drop a constraint written in CREATE TABLE, so the
 * table is rebuilt, rows and IDs kept. Sessions reference users, and foreign keys are on and cannot be turned
 * off inside the migration's transaction (db/kysely.ts), so sessions are rebuilt beside it: dropping the old
 * users table leaves no reference behind, and renaming the new one rewrites sessions' reference to it.
 * Every session survives: nobody is signed out by the upgrade.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await db.schema
      .createIndex("users_organization_email_key")
      .on("users")
      .columns(["organization_id", "email_folded"])
      .unique()
      .execute();
    await db.schema.dropIndex("users_organization_id_idx").execute();
    await sql`alter table users drop constraint users_email_folded_key`.execute(db);
    await db.schema.createIndex("users_email_folded_idx").on("users").column("email_folded").execute();
    return;
  }
  await rebuildSqliteTables(db, { emailUniqueOnServer: false });
  await db.schema
    .createIndex("users_organization_email_key")
    .on("users")
    .columns(["organization_id", "email_folded"])
    .unique()
    .execute();
  await db.schema.createIndex("users_email_folded_idx").on("users").column("email_folded").execute();
}

/** Back to one account per email on the server: fails (and changes nothing) while an email has several. */
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await db.schema.dropIndex("users_email_folded_idx").execute();
    await sql`alter table users add constraint users_email_folded_key unique (email_folded)`.execute(db);
    await db.schema.dropIndex("users_organization_email_key").execute();
    await db.schema
      .createIndex("users_organization_id_idx")
      .on("users")
      .columns(["organization_id", "email_folded"])
      .execute();
    return;
  }
  await rebuildSqliteTables(db, { emailUniqueOnServer: true });
  await db.schema
    .createIndex("users_organization_id_idx")
    .on("users")
    .columns(["organization_id", "email_folded"])
    .execute();
}

function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** users and sessions as migrations 0013 and 0016 left them, `email_folded` unique or not; indexes recreated. */
async function rebuildSqliteTables(
  db: Kysely<any>,
  options: { emailUniqueOnServer: boolean },
): Promise<void> {
  await db.schema
    .createTable("users_rebuilt")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_folded", "text", (c) =>
      options.emailUniqueOnServer ? c.notNull().unique() : c.notNull(),
    )
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("disabled_at", "text")
    .addColumn("last_sign_in_at", "text")
    .execute();
  await sql`
    insert into users_rebuilt
      (id, organization_id, email, email_folded, role, password_hash, created_at, disabled_at, last_sign_in_at)
    select id, organization_id, email, email_folded, role, password_hash, created_at, disabled_at, last_sign_in_at
    from users
  `.execute(db);
  await db.schema
    .createTable("sessions_rebuilt")
    .addColumn("id_hash", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users_rebuilt.id"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_seen_at", "text", (c) => c.notNull())
    .execute();
  await sql`
    insert into sessions_rebuilt (id_hash, user_id, created_at, last_seen_at)
    select id_hash, user_id, created_at, last_seen_at from sessions
  `.execute(db);
  await db.schema.dropTable("sessions").execute();
  await db.schema.dropTable("users").execute();
  await db.schema.alterTable("users_rebuilt").renameTo("users").execute();
  await db.schema.alterTable("sessions_rebuilt").renameTo("sessions").execute();
  await db.schema.createIndex("sessions_user_id_idx").on("sessions").column("user_id").execute();
  await db.schema.createIndex("sessions_last_seen_at_idx").on("sessions").column("last_seen_at").execute();
}
