import { chmodSync, closeSync, fchmodSync, lstatSync, mkdirSync, openSync } from "node:fs";
import { chmod, lstat, mkdir, readdir } from "node:fs/promises";
import path from "node:path";

/**
 * The data dir holds the token signing key (in the SQLite database), client secrets (credentials.json) and
 * every uploaded binary: nothing in it may be readable by another local user. Directories are created 0700
 * and files 0600. A `mode` given at creation is only ever narrowed by the umask, so it is enough for what
 * this process creates itself; what others create (SQLite its database file) is made 0600 explicitly.
 */
export const privateDirMode = 0o700;
export const privateFileMode = 0o600;

/** Any permission for group or others. */
const openToOthers = 0o077;

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}

/** Creates `dir` and its missing parents 0700; directories that existed already are left as they are. */
export function makePrivateDirSync(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: privateDirMode });
  if (first === undefined) return;
  // A umask cannot widen 0700, but one that narrows the owner's own bits would leave the dir unusable.
  for (let created = path.resolve(dir); ; created = path.dirname(created)) {
    chmodSync(created, privateDirMode);
    if (created === path.resolve(first) || created === path.dirname(created)) break;
  }
}

/**
 * Takes group and other permissions off one path (0644 → 0600, 0755 → 0700), if it has any.
 * Returns whether it had to; a path that does not exist (or no longer does) needs nothing.
 */
export function restrictToOwnerSync(file: string): boolean {
  let mode: number;
  try {
    const stats = lstatSync(file);
    if (stats.isSymbolicLink()) return false;
    mode = stats.mode;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
  if ((mode & openToOthers) === 0) return false;
  chmodSync(file, mode & 0o700);
  return true;
}

/**
 * Prepares a SQLite database file before it is opened: its directory exists (created 0700), the file exists
 * with mode 0600 (SQLite gives the -wal and -shm files it creates later the database file's mode), and an
 * existing database, -wal or -shm that others could read is restricted. Returns the paths it restricted.
 */
export function prepareSqliteFileSync(file: string): string[] {
  makePrivateDirSync(path.dirname(path.resolve(file)));
  try {
    // An empty file is a valid empty database to SQLite; created here, it never has SQLite's default 0644.
    const fd = openSync(file, "wx", privateFileMode);
    try {
      fchmodSync(fd, privateFileMode);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return sqliteFilesRestricted(file);
}

/** Restricts the database and its -wal and -shm files where others could read them; returns those paths. */
export function sqliteFilesRestricted(file: string): string[] {
  return [file, `${file}-wal`, `${file}-shm`].filter((f) => restrictToOwnerSync(f));
}

/**
 * Makes `root` and everything under it private to the owner, and returns the paths that were not. Symbolic
 * links are not followed: what they point to is not ours to change. A missing `root` needs nothing.
 */
export async function makeTreePrivate(root: string): Promise<string[]> {
  const restricted: string[] = [];
  const visit = async (target: string): Promise<void> => {
    let stats: Awaited<ReturnType<typeof lstat>>;
    try {
      stats = await lstat(target);
    } catch (error) {
      // Removed since its directory was read (a staging file finishing): nothing to protect.
      if (isMissing(error)) return;
      throw error;
    }
    if (stats.isSymbolicLink()) return;
    if ((stats.mode & openToOthers) !== 0) {
      await chmod(target, stats.mode & 0o700);
      restricted.push(target);
    }
    if (!stats.isDirectory()) return;
    const names = await readdir(target).catch((error: unknown) => {
      if (isMissing(error)) return [];
      throw error;
    });
    for (const name of names) await visit(path.join(target, name));
  };
  await visit(path.resolve(root));
  return restricted;
}

/**
 * What Testbay keeps in a data dir: the SQLite database with its -wal/-shm/-journal, the credentials files
 * (and their half-written temporaries), the blob store, staging and caches.
 */
const ownEntry =
  /^(testbay\.db(-wal|-shm|-journal)?|(credentials|local-agent)\.json(\.\d+\.tmp)?|blobs|tmp|cache)$/;

/**
 * Makes the data dir (created 0700 if missing) and everything Testbay keeps in it private to the owner;
 * returns the paths that were not. Other entries are left as they are: TESTBAY_DATA_DIR may name a
 * directory that also holds files of the user's own (a home directory, a project), whose modes are theirs.
 */
export async function makeDataDirPrivate(dataDir: string): Promise<string[]> {
  await mkdir(dataDir, { recursive: true, mode: privateDirMode });
  const root = path.resolve(dataDir);
  const restricted: string[] = [];
  const stats = await lstat(root);
  if (!stats.isSymbolicLink() && (stats.mode & openToOthers) !== 0) {
    await chmod(root, stats.mode & 0o700);
    restricted.push(root);
  }
  for (const name of await readdir(root)) {
    if (ownEntry.test(name)) restricted.push(...(await makeTreePrivate(path.join(root, name))));
  }
  return restricted;
}

/** Paths named in full in the warning; the rest are counted. */
const namedInWarning = 20;

export interface PermissionWarningLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** One warning for everything that had to be restricted at start, naming the paths. */
export function warnOfRestrictedPaths(log: PermissionWarningLogger, paths: readonly string[]): void {
  if (paths.length === 0) return;
  log.warn(
    {
      paths: paths.slice(0, namedInWarning),
      ...(paths.length > namedInWarning ? { more: paths.length - namedInWarning } : {}),
    },
    `${paths.length} of Testbay's files or directories were open to other users; restricted them to their owner (files 0600, directories 0700)`,
  );
}
