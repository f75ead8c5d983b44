/**
 * Files between the agent and the device (API.md §14): version files pushed before the run (`adb push`), and
 * after it the plan's `pull` paths, files or directories, fetched with `adb pull` and kept as artifacts
 * `pulled/<shard>/<device path without its leading slash>`. A path that is not on the device is a warning in
 * the run's log, not a failure: tests often write a directory only when something failed (Flank's
 * directories-to-pull behaves the same). `pull_filter` (Flank's files-to-download) keeps only the pulled
 * files whose device path matches one of its regular expressions.
 */
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Adb } from "./adb.ts";
import { artifactSegment } from "./artifact-names.ts";

/** The most path segments the server takes in an artifact name (runtime/artifacts.ts). */
const maxSegments = 8;

/**
 * What adb prints when the remote path is missing: "failed to stat remote object 'P': No such file or
 * directory" (stat v2, Android 8 and later), "remote object 'P' does not exist" (older devices), both from
 * file_sync_client.cpp's do_sync_pull.
 */
const missingRemote =
  /remote object '.*' (?:does not exist|: No such file or directory)|failed to stat remote object '.*': No such file or directory/;

export function saysRemoteMissing(line: string): boolean {
  return missingRemote.test(line);
}

/**
 * The artifact name of a pulled file: `<folder>/<shard>/` and its device path, each segment made of the
 * characters the server takes ([A-Za-z0-9._-], see artifact-names.ts); a path deeper than an artifact name
 * may be has its last segments joined with "__".
 */
export function pulledArtifactName(folder: string, shard: number, devicePath: string): string {
  const segments = devicePath
    .split("/")
    .filter((s) => s !== "")
    .map((s) => artifactSegment(s));
  const room = maxSegments - 2;
  const kept =
    segments.length <= room
      ? segments
      : [...segments.slice(0, room - 1), artifactSegment(segments.slice(room - 1).join("__"))];
  return [folder, String(shard), ...kept].join("/");
}

export type PushResult = { ok: true } | { ok: false; deviceLost: boolean; message: string };

/** `adb push LOCAL REMOTE` of one version file; the parent directories are made by adb. */
export async function pushFile(
  adb: Adb,
  local: string,
  remote: string,
  timeoutMs: number,
): Promise<PushResult> {
  const pushed = await adb.run(["push", local, remote], timeoutMs);
  if (pushed.ok) return { ok: true };
  const why = pushed.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : (pushed.lines.findLast((l) => l.trim() !== "") ?? `exit code ${pushed.exitCode}`);
  return {
    ok: false,
    deviceLost: pushed.deviceLost || !(await adb.present()),
    message: `adb push to ${remote} failed: ${why}`,
  };
}

export interface PullOptions {
  adb: Adb;
  /** Device paths, absolute. */
  paths: readonly string[];
  /** Compiled pull_filter; empty keeps every file. */
  filter: readonly RegExp[];
  /** Where pulls land first (a fresh directory of the step's). */
  workDir: string;
  artifactsDir: string;
  /** "pulled" or "coverage". */
  folder: string;
  shard: number;
  /** Artifact names from a device path, `pulledArtifactName` unless given. */
  name?: (devicePath: string) => string;
  timeoutMs: () => number;
  warn(line: string): void;
}

export interface Pulled {
  /** Artifact names of the files kept. */
  kept: string[];
  /** Paths that were not on the device. */
  missing: string[];
  /** Set when adb lost the device on the way: the rest was not pulled. */
  deviceLost: boolean;
}

/** Pulls each path, then moves the files worth keeping into the artifacts directory under their names. */
export async function pullPaths(options: PullOptions): Promise<Pulled> {
  const result: Pulled = { kept: [], missing: [], deviceLost: false };
  const naming = options.name ?? ((p: string) => pulledArtifactName(options.folder, options.shard, p));
  for (const [index, devicePath] of options.paths.entries()) {
    const landing = path.join(options.workDir, `pull-${options.folder}-${index}`);
    await rm(landing, { recursive: true, force: true });
    await mkdir(landing, { recursive: true });
    // Into an existing directory, adb puts the file or directory under its own base name.
    const pulled = await options.adb.run(["pull", devicePath, landing], options.timeoutMs());
    if (!pulled.ok) {
      if (pulled.lines.some(saysRemoteMissing)) {
        result.missing.push(devicePath);
        options.warn(`warning: ${devicePath} is not on the device; nothing pulled from it`);
        continue;
      }
      if (pulled.deviceLost || !(await options.adb.present())) {
        result.deviceLost = true;
        options.warn(`warning: the device went away while pulling ${devicePath}`);
        return result;
      }
      options.warn(
        `warning: adb pull ${devicePath} failed: ${pulled.lines.findLast((l) => l.trim() !== "") ?? pulled.exitCode}`,
      );
      continue;
    }
    const base = path.posix.basename(devicePath.replace(/\/+$/, "")) || "root";
    for (const file of await filesUnder(landing)) {
      const relative = path.relative(path.join(landing, base), file).split(path.sep).join("/");
      const onDevice = relative === "" ? devicePath : path.posix.join(devicePath, relative);
      if (options.filter.length > 0 && !options.filter.some((r) => r.test(onDevice))) continue;
      const name = naming(onDevice);
      const destination = path.join(options.artifactsDir, ...name.split("/"));
      await mkdir(path.dirname(destination), { recursive: true });
      await rename(file, destination);
      result.kept.push(name);
    }
    await rm(landing, { recursive: true, force: true });
  }
  return result;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}
