import { chmod, lstat, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  makeDataDirPrivate,
  makePrivateDirSync,
  makeTreePrivate,
  prepareSqliteFileSync,
} from "./fs-permissions.ts";

let root: string;
let umask: number;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "testbay-fs-"));
  // The most permissive umask: whatever comes out private was made so by the code, not by the umask.
  umask = process.umask(0);
});
afterEach(async () => {
  process.umask(umask);
  await rm(root, { recursive: true, force: true });
});

const modeOf = async (file: string) => (await lstat(file)).mode & 0o777;

describe("makePrivateDirSync", () => {
  it("creates missing directories 0700 and leaves existing parents alone", async () => {
    await chmod(root, 0o755);
    const dir = path.join(root, "a", "b");
    makePrivateDirSync(dir);
    expect(await modeOf(path.join(root, "a"))).toBe(0o700);
    expect(await modeOf(dir)).toBe(0o700);
    expect(await modeOf(root)).toBe(0o755);
  });
});

describe("prepareSqliteFileSync", () => {
  it("creates the database file 0600 before SQLite would create it 0644", async () => {
    const file = path.join(root, "data", "testbay.db");
    expect(prepareSqliteFileSync(file)).toEqual([]);
    expect(await modeOf(file)).toBe(0o600);
    expect((await stat(file)).size).toBe(0);
  });

  it("restricts an existing database and its -wal and -shm, and names them", async () => {
    const file = path.join(root, "testbay.db");
    for (const f of [file, `${file}-wal`, `${file}-shm`]) await writeFile(f, "", { mode: 0o644 });
    expect(prepareSqliteFileSync(file)).toEqual([file, `${file}-wal`, `${file}-shm`]);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(await modeOf(f)).toBe(0o600);
  });
});

describe("makeTreePrivate", () => {
  it("takes group and other bits off every directory and file, keeping the owner's, and lists them", async () => {
    const dir = path.join(root, "data");
    await mkdir(path.join(dir, "blobs", "versions"), { recursive: true, mode: 0o755 });
    await writeFile(path.join(dir, "blobs", "versions", "bin"), "x", { mode: 0o644 });
    await writeFile(path.join(dir, "run.sh"), "x", { mode: 0o755 });
    await writeFile(path.join(dir, "private"), "x", { mode: 0o600 });
    await chmod(dir, 0o755);

    const restricted = await makeTreePrivate(dir);

    expect(restricted.sort()).toEqual(
      [dir, "blobs", "blobs/versions", "blobs/versions/bin", "run.sh"]
        .map((p) => (p === dir ? dir : path.join(dir, p)))
        .sort(),
    );
    expect(await modeOf(dir)).toBe(0o700);
    expect(await modeOf(path.join(dir, "blobs", "versions"))).toBe(0o700);
    expect(await modeOf(path.join(dir, "blobs", "versions", "bin"))).toBe(0o600);
    expect(await modeOf(path.join(dir, "run.sh"))).toBe(0o700);
    expect(await makeTreePrivate(dir)).toEqual([]);
  });

  it("does not follow symbolic links out of the tree", async () => {
    const dir = path.join(root, "data");
    await mkdir(dir, { mode: 0o700 });
    const outside = path.join(root, "shared.txt");
    await writeFile(outside, "x", { mode: 0o644 });
    await symlink(outside, path.join(dir, "link"));
    expect(await makeTreePrivate(dir)).toEqual([]);
    expect(await modeOf(outside)).toBe(0o644);
  });
});

describe("makeDataDirPrivate", () => {
  it("creates a missing data dir 0700", async () => {
    const dir = path.join(root, "new", "data");
    expect(await makeDataDirPrivate(dir)).toEqual([]);
    expect(await modeOf(dir)).toBe(0o700);
  });

  it("restricts the data dir and what Testbay keeps in it, and leaves the user's own files alone", async () => {
    const dir = path.join(root, "home");
    await mkdir(path.join(dir, "blobs"), { recursive: true, mode: 0o755 });
    await mkdir(path.join(dir, "projects"), { mode: 0o755 });
    for (const name of ["testbay.db", "testbay.db-wal", "credentials.json", "notes.txt", "projects/app.kt"]) {
      await writeFile(path.join(dir, name), "x", { mode: 0o644 });
    }
    await chmod(dir, 0o755);

    const restricted = await makeDataDirPrivate(dir);

    expect(restricted.sort()).toEqual(
      [
        dir,
        ...["blobs", "credentials.json", "testbay.db", "testbay.db-wal"].map((p) => path.join(dir, p)),
      ].sort(),
    );
    expect(await modeOf(path.join(dir, "notes.txt"))).toBe(0o644);
    expect(await modeOf(path.join(dir, "projects"))).toBe(0o755);
    expect(await modeOf(path.join(dir, "projects", "app.kt"))).toBe(0o644);
  });
});
