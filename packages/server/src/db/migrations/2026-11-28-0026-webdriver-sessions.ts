import { type Kysely, PostgresAdapter, sql } from "kysely";

/**
 * WebDriver sessions (API.md §12, issue 27). A session is an execution of kind `session` with no test plan and,
 * when it names no registered app, no version: `executions.kind` is added (`run` for every execution before it)
 * and `test_plan_id`, `app_version_id`, `package_name` and `version` may be null. What only a session has (the
 * client it is bound to, its state, what Appium answered, its limits) is in `webdriver_sessions`, one row per
 * session execution. (`sessions` is taken: the dashboard's signed-in sessions, migration 0013.)
 *
 * PostgreSQL drops the NOT NULL constraints. SQLite cannot, and here its defensive mode (better-sqlite3's
 * default) refuses the writable_schema way of editing the stored CREATE TABLE, so `executions` is rebuilt from
 * its own stored CREATE TABLE text with the four NOT NULLs taken out, rows, indexes and the tables referencing it
 * kept. Foreign keys are on and cannot be turned off inside the migration's transaction (db/kysely.ts), so they
 * are deferred to its commit: dropping `executions` leaves its children's rows dangling for a moment, and putting
 * the same rows back into the rebuilt table (same name, same IDs) makes every reference whole again before the
 * commit checks them.
 */
const nullable = ["test_plan_id", "app_version_id", "package_name", "version"] as const;

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const column of nullable) {
      await db.schema
        .alterTable("executions")
        .alterColumn(column, (c) => c.dropNotNull())
        .execute();
    }
  } else {
    await rebuildSqliteExecutions(db, (create) => {
      let edited = create;
      for (const column of nullable) edited = replaceOnce(edited, notNullColumn(column), `"${column}" text`);
      return edited;
    });
  }
  await db.schema
    .alterTable("executions")
    .addColumn("kind", "text", (c) => c.notNull().defaultTo("run"))
    .execute();

  await db.schema
    .createTable("webdriver_sessions")
    .addColumn("execution_id", "text", (c) => c.primaryKey().references("executions.id"))
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    // The client whose credentials created it: later commands may come without credentials (API.md §12), and
    // a command with another client's is refused as an unknown session.
    .addColumn("client_id", "text", (c) => c.notNull().references("clients.id"))
    // queued (waiting for a device and Appium), ready, failed (never became ready), ended.
    .addColumn("state", "text", (c) => c.notNull())
    // JSON text: the capabilities Appium answered with, once ready.
    .addColumn("capabilities", "text")
    // Why it failed to start: the W3C error code and the agent's message.
    .addColumn("error", "text")
    .addColumn("message", "text")
    // Why it ended: deleted, idle_timeout, max_duration, cancelled, agent_lost, device_lost, …
    .addColumn("end_reason", "text")
    .addColumn("idle_timeout_seconds", "integer", (c) => c.notNull())
    .addColumn("max_duration_seconds", "integer", (c) => c.notNull())
    // What the client said of its session (POST /v1/executions/{id}/result, setSessionStatus).
    .addColumn("result_status", "text")
    .addColumn("result_reason", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("ready_at", "text")
    .addColumn("ended_at", "text")
    .execute();
  await db.schema
    .createIndex("webdriver_sessions_organization_idx")
    .on("webdriver_sessions")
    .columns(["organization_id", "created_at"])
    .execute();
}

/** Back to executions of plans only: fails, changing nothing, while a session execution is stored. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("webdriver_sessions").execute();
  const sessions = await sql<{ n: number | string }>`select count(*) as n from executions where kind <> 'run'
    or test_plan_id is null or app_version_id is null or package_name is null or version is null`.execute(db);
  if (Number(sessions.rows[0]?.n ?? 0) > 0) {
    throw new Error(
      "executions of kind session are stored: delete them before going back past migration 0026 (executions before it always have a test plan and a version)",
    );
  }
  await db.schema.alterTable("executions").dropColumn("kind").execute();
  if (isPostgres(db)) {
    for (const column of nullable) {
      await db.schema
        .alterTable("executions")
        .alterColumn(column, (c) => c.setNotNull())
        .execute();
    }
    return;
  }
  await rebuildSqliteExecutions(db, (create) => {
    let edited = create;
    for (const column of nullable) edited = replaceOnce(edited, `"${column}" text`, notNullColumn(column));
    return edited;
  });
}

function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** How Kysely wrote these columns in migration 0004 (none of the four has a reference or a default). */
const notNullColumn = (column: string) => `"${column}" text not null`;

function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + from.length) >= 0) {
    throw new Error(`migration 0026: expected ${from} once in executions' CREATE TABLE, found: ${text}`);
  }
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/**
 * Rebuilds SQLite's `executions` from its stored CREATE TABLE text as `edit` changes it: rows kept (a copy
 * beside it meanwhile), indexes made again from their stored text, references from other tables resolved to the
 * rebuilt table by its name. Every column keeps its place, so the rows go back with `select *`.
 */
async function rebuildSqliteExecutions(db: Kysely<any>, edit: (create: string) => string): Promise<void> {
  const table = await sql<{ sql: string }>`select sql from sqlite_master
    where type = 'table' and name = 'executions'`.execute(db);
  const create = table.rows[0]?.sql;
  if (create === undefined) throw new Error("migration 0026: there is no executions table");
  const indexes = await sql<{ sql: string }>`select sql from sqlite_master
    where type = 'index' and tbl_name = 'executions' and sql is not null`.execute(db);
  const rebuilt = edit(create);

  await sql`pragma defer_foreign_keys = on`.execute(db);
  await sql`create table executions_rows_0026 as select * from executions`.execute(db);
  await sql`drop table executions`.execute(db);
  await sql.raw(rebuilt).execute(db);
  await sql`insert into executions select * from executions_rows_0026`.execute(db);
  await sql`drop table executions_rows_0026`.execute(db);
  for (const index of indexes.rows) await sql.raw(index.sql).execute(db);
}
