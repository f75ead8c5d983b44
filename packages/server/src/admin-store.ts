import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { type Kysely, sql } from "kysely";
import type { Config } from "./config.ts";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "./db/kysely.ts";
import type { Database } from "./db/schema.ts";
import { redactConnectionUrl } from "./redact-connection-url.ts";

/**
 * The admin commands other than `start` and `migrate` find no store where the configuration points: no
 * database file, a database with no migration applied, or (PostgreSQL) no such database. Run from another
 * directory, `./.testbay` is a different data dir; such a command used to create a new, empty store there and
 * list nothing, or advise creating organization `default` in it (issue 25). The CLI exits 2 with this message.
 */
export class StoreMissingError extends Error {
  override name = "StoreMissingError";
}

/** The SQLite file of a `sqlite:` URL, absolute; undefined for PostgreSQL. */
function sqliteFile(config: Config): string | undefined {
  if (!config.databaseUrl.startsWith("sqlite:")) return undefined;
  const file = config.databaseUrl.slice("sqlite:".length);
  return file === ":memory:" ? file : path.resolve(file);
}

/**
 * The line an admin command prints (on stderr) before it works: which store it used, so one run against the
 * wrong one is plain to see. PostgreSQL's URL is shown with its password hidden.
 */
export function storeDescription(config: Config): string {
  const file = sqliteFile(config);
  if (file !== undefined) return `using data dir ${config.dataDir} (SQLite ${file})`;
  return `using PostgreSQL ${redactConnectionUrl(config.databaseUrl)} (TESTBAY_DATABASE_URL)`;
}

/** The message for a store that is not there, naming the variable that points at it and what to do. */
function missing(config: Config, what: string): StoreMissingError {
  const file = sqliteFile(config);
  if (file === undefined) {
    return new StoreMissingError(
      `${what}. Set TESTBAY_DATABASE_URL to the server's database; to make a new store in this one, run testbay-server migrate (or testbay-server start) first.`,
    );
  }
  const defaultFile = path.join(config.dataDir, "testbay.db");
  const pointer =
    file === defaultFile
      ? `TESTBAY_DATA_DIR is ${config.dataDir} (./.testbay in the current directory unless set)`
      : `TESTBAY_DATABASE_URL is ${redactConnectionUrl(config.databaseUrl)}`;
  return new StoreMissingError(
    `${what} (${pointer}). Run this from the directory that holds the server's .testbay, or set TESTBAY_DATA_DIR to the server's data dir (TESTBAY_DATABASE_URL to its database, if it has one elsewhere); to make a new store, run testbay-server start (or testbay-server migrate) first.`,
  );
}

/** How many migrations the database has had: 0 for one Testbay never migrated. */
async function appliedMigrations(db: Kysely<Database>): Promise<number> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === "kysely_migration")) return 0;
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from kysely_migration`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Opens the store an admin command works on: it must exist and have been migrated at least once (by `start`
 * or `migrate`); nothing is created when it does not. Migrations a newer server added are applied, as
 * `start` would. Throws StoreMissingError when there is no store.
 */
export async function openExistingStore(config: Config): Promise<DatabaseHandle> {
  const file = sqliteFile(config);
  if (file === ":memory:") throw missing(config, "An in-memory SQLite database holds no store");
  if (file !== undefined) {
    if (!existsSync(file)) throw missing(config, `No Testbay store here: ${file} does not exist`);
    // SQLite would take an empty file for an empty database, and write to it.
    if (statSync(file).size === 0) throw missing(config, `No Testbay store here: ${file} is empty`);
  }
  const handle = openDatabase(config.databaseUrl);
  try {
    let applied: number;
    try {
      applied = await appliedMigrations(handle.db);
    } catch (error) {
      // 3D000: PostgreSQL has no database of that name.
      if ((error as { code?: unknown }).code !== "3D000") throw error;
      throw missing(
        config,
        `No Testbay store here: PostgreSQL has no database ${redactConnectionUrl(config.databaseUrl)} (create it with createdb)`,
      );
    }
    if (applied === 0) {
      const where = file ?? `PostgreSQL database ${redactConnectionUrl(config.databaseUrl)}`;
      throw missing(config, `No Testbay store here: ${where} has no Testbay tables (no migration applied)`);
    }
    await migrateToLatest(handle.db);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}
