/**
 * Test servers start on a database that already has every migration, copied from a template migrated once,
 * instead of migrating each new database (harness.ts startOneServer). A server starting on it applies no
 * migration, as a server restarting on its store does. Measured on the 2-core CI machine: migrating a new
 * database took 3 s on PostgreSQL and 0.4 s on SQLite, and the suites start a few hundred servers.
 *
 * The template is named by a hash of the migrations' source, so a changed or added migration makes a new one;
 * the migration tests (db/migrations/migration-test.fixture.ts) still migrate an empty database step by step.
 */
import { createHash } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { migrateToLatest, openDatabase } from "../src/db/kysely.ts";

const migrationsDir = fileURLToPath(new URL("../src/db/migrations/", import.meta.url));

let hash: Promise<string> | undefined;

/** A hash of every migration file's text (and the list of them). */
function migrationsHash(): Promise<string> {
  hash ??= (async () => {
    const digest = createHash("sha256");
    for (const name of (await readdir(migrationsDir)).sort()) {
      if (!name.endsWith(".ts") || name.includes(".test.")) continue;
      digest.update(name).update(await readFile(path.join(migrationsDir, name)));
    }
    return digest.digest("hex").slice(0, 16);
  })();
  return hash;
}

/** Fills `file` with a migrated SQLite database. */
export async function copyMigratedSqlite(file: string): Promise<void> {
  const template = path.join(tmpdir(), "testbay-test-templates", `sqlite-${await migrationsHash()}.db`);
  try {
    await copyFile(template, file);
    return;
  } catch {
    // not made yet
  }
  // Made beside it and renamed into place: test workers in other processes may be making it at once.
  await mkdir(path.dirname(template), { recursive: true });
  const making = `${template}.${process.pid}.${Date.now()}`;
  const handle = openDatabase(`sqlite:${making}`);
  await migrateToLatest(handle.db);
  await handle.close();
  // Closing checkpoints the write-ahead log into the file, which is then whole by itself.
  await rm(`${making}-wal`, { force: true });
  await rm(`${making}-shm`, { force: true });
  await rename(making, template);
  await copyFile(template, file);
}

/**
 * The name of a migrated PostgreSQL database to create new ones from (`CREATE DATABASE … TEMPLATE`), made on
 * the first call. `admin` is a connection to another database of the same server.
 */
export async function postgresTemplate(admin: pg.Client, adminUrl: string): Promise<string> {
  const name = `testbay_template_${await migrationsHash()}`;
  // One maker across the test processes; the others wait here, then find it made.
  await admin.query("SELECT pg_advisory_lock(hashtext('testbay test template'))");
  try {
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) {
      const making = `${name}_making`;
      await admin.query(`DROP DATABASE IF EXISTS ${making} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${making}`);
      const url = new URL(adminUrl);
      url.pathname = `/${making}`;
      const handle = openDatabase(url.toString());
      await migrateToLatest(handle.db);
      // No session may be connected to a template while a database is created from it.
      await handle.close();
      await admin.query(`ALTER DATABASE ${making} RENAME TO ${name}`);
    }
  } finally {
    await admin.query("SELECT pg_advisory_unlock(hashtext('testbay test template'))");
  }
  return name;
}
