import { chmod, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerBasicApp, scaledSuite, startTestServer, testDatabase } from "../test/harness.ts";

/**
 * The data dir holds the token signing key (in the SQLite database), client secrets and every uploaded
 * binary: another local user must not be able to read any of it, whatever the umask and whatever an
 * earlier version left behind.
 */

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "testbay-perms-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** Every path under `dir` (itself included) with its permission bits. */
async function modes(dir: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const visit = async (target: string) => {
    const stats = await lstat(target);
    found.set(path.relative(dir, target) || ".", stats.mode & 0o777);
    if (stats.isDirectory()) for (const name of await readdir(target)) await visit(path.join(target, name));
  };
  await visit(dir);
  return found;
}

function openToOthers(found: Map<string, number>): string[] {
  return [...found].filter(([, mode]) => (mode & 0o077) !== 0).map(([p, mode]) => `${p} ${mode.toString(8)}`);
}

/** A server whose data dir is `dataDir` (and, on SQLite, whose database is in it, as by default). */
function serverOn(dataDir: string) {
  return startTestServer({
    env: {
      TESTBAY_DATA_DIR: dataDir,
      ...(testDatabase === "sqlite"
        ? { TESTBAY_DATABASE_URL: `sqlite:${path.join(dataDir, "testbay.db")}` }
        : {}),
    },
  });
}

describe("the data dir", () => {
  it("is created 0700 with every file in it 0600, even under umask 000", async () => {
    const dataDir = path.join(root, "fresh", "data");
    const umask = process.umask(0);
    let server: Awaited<ReturnType<typeof serverOn>> | undefined;
    try {
      server = await serverOn(dataDir);
      // Blobs, staging dirs and (SQLite) the database with its -wal and -shm: written by a real upload.
      const ci = await server.createClient("acme", "ci");
      await registerBasicApp(server, { "x-api-key": await server.token(ci) });
    } finally {
      process.umask(umask);
    }
    try {
      const found = await modes(dataDir);
      expect(found.get(".")).toBe(0o700);
      if (testDatabase === "sqlite") {
        for (const file of ["testbay.db", "testbay.db-wal", "testbay.db-shm"])
          expect(found.get(file)).toBe(0o600);
      }
      // The scaled configuration keeps blobs in S3; otherwise they are files here, and must be private too.
      if (!scaledSuite) expect([...found.keys()].some((p) => p.startsWith("blobs/versions/"))).toBe(true);
      expect(openToOthers(found)).toEqual([]);
      expect(server.logs.join("")).not.toMatch(/open to other users/);
    } finally {
      await server.close();
    }
  });

  it("is repaired at start when an earlier run left it and its files readable by others, with one warning", async () => {
    const dataDir = path.join(root, "loose");
    const first = await serverOn(dataDir);
    const ci = await first.createClient("acme", "ci");
    await registerBasicApp(first, { "x-api-key": await first.token(ci) });
    await first.close();
    // As an earlier version and a umask of 022 left them: directories 0755, files 0644.
    await writeFile(path.join(dataDir, "credentials.json"), "{}\n", { mode: 0o644 });
    const loose = [...(await modes(dataDir)).keys()].map((p) => path.join(dataDir, p));
    for (const target of loose) {
      await chmod(target, (await lstat(target)).isDirectory() ? 0o755 : 0o644);
    }
    await mkdir(path.join(dataDir, "tmp", "stray"), { recursive: true, mode: 0o755 });
    await chmod(path.join(dataDir, "tmp", "stray"), 0o755);

    const second = await serverOn(dataDir);
    try {
      const found = await modes(dataDir);
      expect(openToOthers(found)).toEqual([]);
      expect(found.get(".")).toBe(0o700);
      expect(found.get("credentials.json")).toBe(0o600);
      if (testDatabase === "sqlite") expect(found.get("testbay.db")).toBe(0o600);

      const warnings = second.logs
        .join("")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line))
        .filter((entry) => /open to other users/.test(entry.msg));
      expect(warnings).toHaveLength(1);
      const [warning] = warnings;
      expect(warning.level).toBe(40);
      const named: string[] = warning.paths;
      expect(named).toContain(dataDir);
      expect(named).toContain(path.join(dataDir, "credentials.json"));
      if (testDatabase === "sqlite") expect(named).toContain(path.join(dataDir, "testbay.db"));
      // Every loose path is named or counted, none twice.
      expect(new Set(named).size).toBe(named.length);
      expect(named.length + (warning.more ?? 0)).toBeGreaterThanOrEqual(loose.length);
    } finally {
      await second.close();
    }
  });
});
