/**
 * The files an xcuitest step needs from what it downloaded: the app bundle to install (an IPA holds it as
 * Payload/X.app; a zipped .app holds X.app, possibly in a folder) and the test package's .xctestrun (a zip of
 * what `xcodebuild build-for-testing` writes: the xctestrun names the runner app and test bundles relative to
 * its own folder, so the zip is unpacked whole). `unzip` ships with macOS; it keeps the symlinks and modes a
 * bundle needs.
 */
import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { runProcess } from "../steps/process-runner.ts";

export type Unpacked = { path: string } | { error: string };

export async function unzip(zip: string, dir: string, signal: AbortSignal): Promise<string | null> {
  await mkdir(dir, { recursive: true });
  const lines: string[] = [];
  const result = await runProcess({
    command: "unzip",
    args: ["-q", "-o", zip, "-d", dir],
    cwd: dir,
    env: process.env,
    timeoutMs: 600_000,
    signal,
    onLine: (_stream, line) => {
      if (lines.length < 20) lines.push(line);
    },
  });
  if (result.exitCode === 0) return null;
  return `unzip failed: ${lines.at(-1) ?? result.spawnError ?? `exit code ${result.exitCode}`}`;
}

/** The first entry (breadth first, at most `depth` folders down) whose name matches; bundles are not entered. */
export async function findEntry(
  dir: string,
  matches: (name: string) => boolean,
  depth = 3,
): Promise<string | null> {
  let level = [dir];
  for (let d = 0; d <= depth && level.length > 0; d++) {
    const next: string[] = [];
    for (const folder of level) {
      const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        if (entry.name === "__MACOSX") continue;
        if (matches(entry.name)) return path.join(folder, entry.name);
        if (entry.isDirectory() && !/\.(app|xctest|framework)$/.test(entry.name)) {
          next.push(path.join(folder, entry.name));
        }
      }
    }
    level = next;
  }
  return null;
}

/** Unpacks the app's IPA or zipped .app into `dir` and finds the .app bundle in it. */
export async function unpackApp(archive: string, dir: string, signal: AbortSignal): Promise<Unpacked> {
  const failed = await unzip(archive, dir, signal);
  if (failed) return { error: `could not unpack the app: ${failed}` };
  const payload = await findEntry(path.join(dir, "Payload"), (name) => name.endsWith(".app"), 0);
  const app = payload ?? (await findEntry(dir, (name) => name.endsWith(".app"), 2));
  return app ? { path: app } : { error: "the app's archive holds no .app bundle" };
}

/** Unpacks the test package into `dir` and finds its .xctestrun. */
export async function unpackTestPackage(
  archive: string,
  dir: string,
  signal: AbortSignal,
): Promise<Unpacked> {
  const failed = await unzip(archive, dir, signal);
  if (failed) return { error: `could not unpack the test package: ${failed}` };
  const xctestrun = await findEntry(dir, (name) => name.endsWith(".xctestrun"));
  return xctestrun
    ? { path: xctestrun }
    : {
        error:
          "the test package holds no .xctestrun file: upload the folder xcodebuild build-for-testing wrote",
      };
}
