import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../config.ts";
import { migrations } from "../db/migrations/index.ts";
import { privateDirMode } from "../fs-permissions.ts";
import { assertValidKey } from "../storage/blob-store.ts";
import { BackupRefusedError } from "./backup-errors.ts";
import { type LocalStore, localStoreOf } from "./local-store.ts";
import {
  blobsPrefix,
  copyHashing,
  databaseName,
  dataDirFiles,
  hashFile,
  type Manifest,
  type ManifestFile,
  manifestName,
  parseManifest,
} from "./manifest.ts";

/** At most this many problems are listed in a refusal; the count says how many there were. */
const problemsShown = 20;

/**
 * `testbay-server restore --from DIR` (API.md §15): into an empty data dir only, and only a backup that is
 * exactly what its manifest says. Every check comes before the first write: the schema (a server cannot run
 * a database migrated past what it knows), the target (never mixed with another store), the set of files
 * (none missing, none added) and every file's size and SHA-256. Files are then copied as streams and hashed
 * again on the way, since the backup could change between the check and the copy; if anything fails then,
 * what was written is removed, so a refused restore leaves the data dir as it was: empty.
 */
export async function restoreBackup(
  config: Config,
  from: string,
  say: (line: string) => void,
): Promise<Manifest> {
  const store = localStoreOf(config, "restore");
  const source = path.resolve(from);
  const manifest = await readManifest(source);
  refuseNewerSchema(manifest.schema_version);
  await refuseNonEmptyTarget(store);

  const { planned, problems } = await planCopies(source, manifest, store);
  for (const { file, from: copyFrom } of planned) {
    const actual = await hashFile(copyFrom);
    if (actual.size !== file.size || actual.sha256 !== file.sha256) {
      problems.push(`${file.path}: ${describeDifference(file, actual)}`);
    }
  }
  if (problems.length > 0) throw tampered(source, problems);

  say(`Backup ${source} checked: ${planned.length} files as its manifest says`);
  const created: string[] = [];
  try {
    for (const { file, from: copyFrom, to } of planned) {
      const firstMade = await mkdir(path.dirname(to), { recursive: true, mode: privateDirMode });
      if (firstMade) created.push(firstMade);
      created.push(to);
      const copy = await copyHashing(copyFrom, to);
      if (copy.sha256 !== file.sha256 || copy.size !== file.size) {
        throw tampered(source, [`${file.path}: changed while it was being restored`]);
      }
    }
  } catch (error) {
    // Newest first: files before the directories that hold them.
    for (const made of created.reverse()) await rm(made, { recursive: true, force: true });
    throw error;
  }
  return manifest;
}

async function readManifest(source: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(path.join(source, manifestName), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new BackupRefusedError(
      `${source} has no ${manifestName}: it is not a Testbay backup, or a backup that did not finish (the manifest is written last). Nothing was restored.`,
      2,
    );
  }
  try {
    return parseManifest(text);
  } catch (error) {
    throw tampered(source, [`${manifestName}: ${(error as Error).message}`]);
  }
}

/** Migration names are dated and applied in name order (db/migrations/index.ts), so order says newer. */
function refuseNewerSchema(schemaVersion: string): void {
  const known = Object.keys(migrations).sort();
  if (known.includes(schemaVersion)) return;
  const newest = known.at(-1) ?? "";
  if (schemaVersion > newest) {
    throw new BackupRefusedError(
      `the backup is from a newer Testbay: its database has migration ${schemaVersion}, and this testbay-server knows migrations up to ${newest}. Restore it with the Testbay version that made it (or a newer one). Nothing was restored.`,
      2,
    );
  }
  throw new BackupRefusedError(
    `the backup names schema_version ${schemaVersion}, which is no Testbay migration. Nothing was restored.`,
    3,
  );
}

/** The data dir, the database file and the blob directory must hold nothing yet. */
async function refuseNonEmptyTarget(store: LocalStore): Promise<void> {
  const occupied: string[] = [];
  for (const dir of new Set([store.dataDir, store.blobRoot])) {
    const entries = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [];
      if (error.code === "ENOTDIR") return undefined;
      throw error;
    });
    if (entries === undefined) occupied.push(`${dir} is a file`);
    else if (entries.length > 0)
      occupied.push(`${dir} holds ${entries.slice(0, 3).join(", ")}${entries.length > 3 ? " and more" : ""}`);
  }
  if (occupied.length === 0 && existsSync(store.databaseFile)) occupied.push(`${store.databaseFile} exists`);
  if (occupied.length > 0) {
    throw new BackupRefusedError(
      `restore writes into an empty data dir only, and ${occupied.join("; ")}. Point TESTBAY_DATA_DIR at a new or empty directory (stop the server first; keep the old data dir until the restored one runs). Nothing was restored.`,
      2,
    );
  }
}

interface PlannedCopy {
  file: ManifestFile;
  from: string;
  to: string;
}

/** Where each manifest file goes, and what about the set of files is wrong: paths, missing, extra. */
async function planCopies(
  source: string,
  manifest: Manifest,
  store: LocalStore,
): Promise<{ planned: PlannedCopy[]; problems: string[] }> {
  const problems: string[] = [];
  const present = await filesIn(source, problems);
  const listed = new Set<string>();
  const planned: PlannedCopy[] = [];
  for (const file of manifest.files) {
    if (listed.has(file.path)) {
      problems.push(`${file.path}: listed twice in ${manifestName}`);
      continue;
    }
    listed.add(file.path);
    const to = destinationOf(file.path, store);
    if (!to) {
      problems.push(`${file.path}: not a file a Testbay backup holds`);
      continue;
    }
    if (!present.has(file.path)) {
      problems.push(`${file.path}: missing from the backup`);
      continue;
    }
    planned.push({ file, from: path.join(source, ...file.path.split("/")), to });
  }
  if (!listed.has(databaseName)) problems.push(`${databaseName}: not in ${manifestName}`);
  for (const file of present) {
    if (!listed.has(file)) problems.push(`${file}: in the backup but not in ${manifestName}`);
  }
  return { planned, problems };
}

/** Regular files under `source` (manifest aside), as `/`-separated relative paths; anything else is a problem. */
async function filesIn(source: string, problems: string[]): Promise<Set<string>> {
  const files = new Set<string>();
  if (!(await stat(source).catch(() => undefined))?.isDirectory()) {
    throw new BackupRefusedError(
      `${source} is not a directory: give --from the directory backup --to wrote`,
      2,
    );
  }
  for (const entry of await readdir(source, { recursive: true, withFileTypes: true })) {
    const relative = path.relative(source, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
    if (entry.isDirectory() || relative === manifestName) continue;
    if (entry.isFile()) files.add(relative);
    else problems.push(`${relative}: not a regular file`);
  }
  return files;
}

/** Where a backup path is restored to, or undefined for a path no backup writes (`..`, odd names). */
function destinationOf(file: string, store: LocalStore): string | undefined {
  if (file === databaseName) return store.databaseFile;
  if ((dataDirFiles as readonly string[]).includes(file)) return path.join(store.dataDir, file);
  if (!file.startsWith(blobsPrefix)) return undefined;
  const key = file.slice(blobsPrefix.length);
  try {
    assertValidKey(key);
  } catch {
    return undefined;
  }
  const to = path.resolve(store.blobRoot, ...key.split("/"));
  return to.startsWith(store.blobRoot + path.sep) ? to : undefined;
}

function describeDifference(expected: ManifestFile, actual: { size: number; sha256: string }): string {
  if (actual.size !== expected.size) return `${actual.size} bytes, the manifest says ${expected.size}`;
  return `sha256 ${actual.sha256}, the manifest says ${expected.sha256}`;
}

function tampered(source: string, problems: string[]): BackupRefusedError {
  const shown = problems.slice(0, problemsShown).map((problem) => `  ${problem}`);
  if (problems.length > problemsShown) shown.push(`  … and ${problems.length - problemsShown} more`);
  return new BackupRefusedError(
    `the backup in ${source} does not match its manifest (changed, missing or added files), so nothing was restored:\n${shown.join("\n")}\nRestore another backup.`,
    3,
  );
}
