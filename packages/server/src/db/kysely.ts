import SqliteDatabase from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from "kysely";
import pg from "pg";
import { prepareSqliteFileSync, sqliteFilesRestricted } from "../fs-permissions.ts";
import { loggableConnectionError, redactConnectionUrl } from "../redact-connection-url.ts";
import { migrations } from "./migrations/index.ts";
import type { Database } from "./schema.ts";

export type Dialect = "sqlite" | "postgres";

/**
 * The kind of database a connection or transaction talks to, for the few statements whose text differs (JSON
 * functions, row locks): read from the connection itself, so a writer handed only a transaction needs no
 * setting passed down to it.
 */
export function dialectOf(db: Kysely<Database>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Database files that other users could read when it was opened, restricted since (to be warned of). */
  restrictedPaths: string[];
  close(): Promise<void>;
}

/** Opens `sqlite:<file>` (creating it and its directory, private to this user) or `postgres://…`. */
export function openDatabase(url: string): DatabaseHandle {
  if (url.startsWith("sqlite:")) return openSqlite(url.slice("sqlite:".length));
  return openPostgres(url);
}

function openSqlite(file: string): DatabaseHandle {
  // The database holds the token signing key: it is 0600 before SQLite opens it, so -wal and -shm are too.
  const restrictedPaths = file === ":memory:" ? [] : prepareSqliteFileSync(file);
  const sqlite = new SqliteDatabase(file);
  // WAL lets readers run while a writer commits; busy_timeout makes a second writer wait instead of failing.
  sqlite.pragma("journal_mode = WAL");
  // SQLite created -wal and -shm just now, or another process did earlier with whatever mode: check them.
  if (file !== ":memory:") restrictedPaths.push(...sqliteFilesRestricted(file));
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("foreign_keys = ON");
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }),
  });
  return { db, dialect: "sqlite", restrictedPaths, close: () => db.destroy() };
}

const statementCacheSize = 500;

/**
 * Kysely prepares every query anew; preparing costs more than running a typical indexed lookup. Statements
 * are kept by SQL text (queries take their values as parameters, so the set of texts is small) and reused.
 * Safe because better-sqlite3 runs one statement at a time and Kysely never streams from two at once here.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig["database"] {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare: (text: string) => {
      let statement = statements.get(text);
      if (statement) {
        // Refresh its place: the Map's order is the eviction order.
        statements.delete(text);
      } else {
        statement = sqlite.prepare(text);
        if (statements.size >= statementCacheSize) {
          const oldest = statements.keys().next();
          if (!oldest.done) statements.delete(oldest.value);
        }
      }
      statements.set(text, statement);
      return statement;
    },
  };
}

/**
 * SQLite with two changes to Kysely's defaults, both about several processes sharing one database file (a
 * server and an admin command, or two servers):
 * - transactions start with BEGIN IMMEDIATE, taking the write lock up front, so a second writer waits
 *   (busy_timeout) instead of failing when a read transaction tries to become a write transaction;
 * - migrations run in one such transaction (SQLite's DDL is transactional), which makes them the
 *   cross-process migration lock that Kysely's SQLite adapter does not provide.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }

  override createAdapter() {
    return new TransactionalDdlSqliteAdapter();
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

function openPostgres(url: string): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle pooled connection that the server ends (restart, failover, DROP DATABASE … FORCE) emits an
  // error with no query to fail; unhandled, it would crash the process. The pool replaces it on next use.
  const where = redactConnectionUrl(url);
  pool.on("error", (error) => {
    process.emitWarning(`PostgreSQL connection lost while idle: ${loggableConnectionError(error).message}`);
  });
  // A failed connection names the server (password hidden), and nothing pg or the URL parser attached to
  // the error (Node's "Invalid URL" carries the whole URL as `input`) reaches a log or the terminal.
  const connect = async () => {
    try {
      // Awaited here: pg parses the URL when it makes a client, and throws that synchronously.
      return await pool.connect();
    } catch (error) {
      const { message, code } = loggableConnectionError(error);
      throw Object.assign(new Error(`cannot connect to PostgreSQL at ${where}: ${message}`), { code });
    }
  };
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect, end: () => pool.end() } }),
  });
  return { db, dialect: "postgres", restrictedPaths: [], close: () => db.destroy() };
}

/**
 * Applies every pending migration. Safe to run from several processes at once: PostgreSQL takes Kysely's
 * advisory lock, SQLite the write lock of the migration transaction.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
