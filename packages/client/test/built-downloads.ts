// Test support: the files `npm run build` makes (packages/server/dist/downloads/), rebuilt when a source they
// are made from is newer. Builds of concurrent test files (one per vitest project) wait for each other.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { watch } from "node:fs";
import { mkdir, readdir, rmdir, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const downloadsDir = path.join(repoRoot, "packages", "server", "dist", "downloads");
export const downloadFiles = ["testbay.mjs", "testbay-cli.tgz", "testbay-agent.tgz"] as const;

const lockDir = path.join(repoRoot, "packages", "server", "dist", ".build-lock");
/** A lock older than this was left by a killed run. */
const staleLockMs = 10 * 60_000;

async function newestMtime(entry: string): Promise<number> {
  const info = await stat(entry).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  const names = await readdir(entry);
  const times = await Promise.all(names.map((name) => newestMtime(path.join(entry, name))));
  return Math.max(0, ...times);
}

async function isFresh(): Promise<boolean> {
  const outputs = await Promise.all(
    downloadFiles.map((file) => stat(path.join(downloadsDir, file)).catch(() => undefined)),
  );
  if (outputs.some((output) => !output)) return false;
  const built = Math.min(...outputs.map((output) => output?.mtimeMs ?? 0));
  const inputs = [
    "packages/client/src",
    "packages/client/bin",
    "packages/client/package.json",
    "packages/agent/src",
    "packages/agent/bin",
    "packages/agent/package.json",
    "packages/server/package.json",
    "scripts/build.ts",
  ].map((entry) => newestMtime(path.join(repoRoot, entry)));
  return Math.max(...(await Promise.all(inputs))) <= built;
}

async function lockReleased(): Promise<void> {
  const watcher = watch(path.dirname(lockDir));
  try {
    const gone = once(watcher, "change");
    // Released between the failed mkdir and the watch: nothing more would change.
    if (!(await stat(lockDir).catch(() => undefined))) return;
    await gone;
  } finally {
    watcher.close();
  }
}

async function runBuild(): Promise<void> {
  const child = spawn("npm", ["run", "build"], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`npm run build exited ${code}:\n${output}`);
}

/** Resolves once the downloads are built from the current sources (building them if needed). */
export async function ensureBuilt(): Promise<void> {
  await mkdir(path.dirname(lockDir), { recursive: true });
  for (;;) {
    if (await isFresh()) return;
    try {
      await mkdir(lockDir);
    } catch {
      const held = await stat(lockDir).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > staleLockMs) await rmdir(lockDir).catch(() => {});
      else await lockReleased();
      continue;
    }
    try {
      if (!(await isFresh())) await runBuild();
      return;
    } finally {
      await rmdir(lockDir);
    }
  }
}
