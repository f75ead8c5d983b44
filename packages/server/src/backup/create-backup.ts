import { existsSync, statSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { StoreMissingError } from "../admin-store.ts";
import type { Config } from "../config.ts";
import { privateDirMode, privateFileMode } from "../fs-permissions.ts";
import { FileBlobStore } from "../storage/index.ts";
import { BackupRefusedError } from "./backup-errors.ts";
import { localStoreOf } from "./local-store.ts";
import {
  blobsPrefix,
  copyHashing,
  databaseName,
  dataDirFiles,
  hashFile,
  type Manifest,
  type ManifestFile,
  manifestName,
} from "./manifest.ts";

export interface BackupSummary {
  manifest: Manifest;
  /** Blob files the copied database names that were deleted before they could be copied (see below). */
  deletedWhileCopying: string[];
}

/**
 * `testbay-server backup --to DIR` (API.md §15): a consistent copy of the embedded store while the server runs.
 *
 * Order matters. The database is copied first, by SQLite's online backup API (better-sqlite3's `backup`),
 * all pages in one step: that step reads one snapshot (the server's writers go on in WAL mode), where a step
 * of a few pages at a time would restart after every write of the running server. The blobs are copied
 * afterwards: every row of the snapshot was inserted after its blob was stored (storage/file-store.ts puts by
 * atomic rename; features/executions/log-store.ts and agent.service.ts store before they insert), so each blob
 * the snapshot names is there, unless it was deleted since (a version deleted, retention); those are listed.
 * Blobs stored after the snapshot are copied too: the restored server simply has files it does not use.
 * The manifest is written last, under another name then renamed, so a backup that stopped has none.
 */
export async function createBackup(
  config: Config,
  to: string,
  say: (line: string) => void,
): Promise<BackupSummary> {
  const store = localStoreOf(config, "backup");
  const file = store.databaseFile;
  if (!existsSync(file) || statSync(file).size === 0) {
    throw new StoreMissingError(
      `No Testbay store here: ${file} ${existsSync(file) ? "is empty" : "does not exist"} (TESTBAY_DATA_DIR is ${store.dataDir}). Set TESTBAY_DATA_DIR to the server's data dir.`,
    );
  }
  const target = path.resolve(to);
  // Inside the blob directory, the backup would copy its own files as blobs (and restore them as such).
  if (target === store.blobRoot || target.startsWith(store.blobRoot + path.sep)) {
    throw new BackupRefusedError(
      `${target} is inside the blob directory ${store.blobRoot}: give --to a directory outside the data dir`,
      2,
    );
  }
  await prepareEmptyDirectory(target);

  const createdAt = new Date().toISOString();
  const files: ManifestFile[] = [];
  const databaseCopy = path.join(target, databaseName);
  say(`Copying the database ${file} …`);
  await snapshotDatabase(file, databaseCopy);
  const { schemaVersion, blobKeys } = readSnapshot(databaseCopy);
  files.push({ path: databaseName, ...(await hashFile(databaseCopy)) });

  const blobs = new FileBlobStore(store.blobRoot);
  let blobBytes = 0;
  const copied = new Set<string>();
  for await (const key of blobs.keys()) {
    // A copy to another file system in progress (file-store.ts): the finished file will have the plain key.
    if (key.endsWith(".partial")) continue;
    const destination = path.join(target, "blobs", ...key.split("/"));
    await mkdir(path.dirname(destination), { recursive: true, mode: privateDirMode });
    const copy = await copyIfPresent(path.join(store.blobRoot, ...key.split("/")), destination);
    if (!copy) continue;
    files.push({ path: `${blobsPrefix}${key}`, ...copy });
    copied.add(key);
    blobBytes += copy.size;
  }
  say(
    `Copied ${copied.size} blob file${copied.size === 1 ? "" : "s"} (${sizeText(blobBytes)}) from ${store.blobRoot}`,
  );

  for (const name of dataDirFiles) {
    const copy = await copyIfPresent(path.join(store.dataDir, name), path.join(target, name));
    if (copy) files.push({ path: name, ...copy });
  }

  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const manifest: Manifest = { schema_version: schemaVersion, created_at: createdAt, files };
  const partial = path.join(target, `${manifestName}.partial`);
  await writeFile(partial, `${JSON.stringify(manifest, null, 2)}\n`, { mode: privateFileMode, flag: "wx" });
  await rename(partial, path.join(target, manifestName));
  return { manifest, deletedWhileCopying: [...blobKeys].filter((key) => !copied.has(key)).sort() };
}

/** The backup's directory: made (private) when missing; an existing one must be empty, never overwritten. */
async function prepareEmptyDirectory(target: string): Promise<void> {
  const existing = await stat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (existing && !existing.isDirectory()) {
    throw new BackupRefusedError(`${target} is not a directory: give --to a new or empty directory`, 2);
  }
  if (existing && (await readdir(target)).length > 0) {
    throw new BackupRefusedError(
      `${target} is not empty: give --to a new or empty directory (a backup never overwrites another)`,
      2,
    );
  }
  await mkdir(target, { recursive: true, mode: privateDirMode });
}

/** Every page in one step (better-sqlite3 takes the progress handler's answer as the next step's size). */
const allPages = 0x7fffffff;

async function snapshotDatabase(file: string, copy: string): Promise<void> {
  // Made 0600 first: SQLite would make the copy with the umask's mode, and it holds the token signing key.
  await writeFile(copy, "", { mode: privateFileMode, flag: "wx" });
  const source = new SqliteDatabase(file, { fileMustExist: true });
  try {
    // The server may hold the write lock for a moment; the snapshot's read waits for it as the server would.
    source.pragma("busy_timeout = 5000");
    await source.backup(copy, { progress: () => allPages });
  } finally {
    source.close();
  }
}

/**
 * Reads what the manifest and the blob check need from the copy, and turns it into a rollback-journal
 * database: one self-contained file (no -wal or -shm to go with it); the server makes it WAL again at start.
 * Blob references are found by column name (`blob_key`, db/schema.ts), so a table added later is included.
 */
function readSnapshot(copy: string): { schemaVersion: string; blobKeys: Set<string> } {
  const database = new SqliteDatabase(copy, { fileMustExist: true });
  try {
    database.pragma("journal_mode = DELETE");
    const hasMigrations = database
      .prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'")
      .get();
    const newest = hasMigrations
      ? (database.prepare("select max(name) as name from kysely_migration").get() as { name: string | null })
      : undefined;
    if (!newest?.name) {
      throw new StoreMissingError(
        `No Testbay store here: the database has no Testbay tables (no migration applied)`,
      );
    }
    const tables = database
      .prepare(
        "select m.name from sqlite_master m join pragma_table_info(m.name) c where m.type = 'table' and c.name = 'blob_key'",
      )
      .pluck()
      .all() as string[];
    const blobKeys = new Set<string>();
    for (const table of tables) {
      const keys = database.prepare(`select blob_key from "${table}"`).pluck().all() as string[];
      // A deleted version keeps its row with `deleted/<id>` for a key (features/versions/versions.repo.ts):
      // no file was ever stored under it.
      for (const key of keys) if (!key.startsWith("deleted/")) blobKeys.add(key);
    }
    return { schemaVersion: newest.name, blobKeys };
  } finally {
    database.close();
  }
}

/** Copies a file that may be deleted at any moment (by the running server): undefined when it was. */
async function copyIfPresent(
  from: string,
  to: string,
): Promise<{ size: number; sha256: string } | undefined> {
  try {
    return await copyHashing(from, to);
  } catch (error) {
    // Only a source deleted meanwhile is skipped; any other failure (the backup's disk full) stops the backup.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || existsSync(from)) throw error;
    await rm(to, { force: true });
    return undefined;
  }
}

/** A size as people read it: KiB below a MiB, MiB above. */
export function sizeText(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
