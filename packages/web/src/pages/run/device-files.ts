import type { Artifact } from "../../api/artifacts.ts";

/**
 * Files the agent copied off the device after a shard's run (API.md §14): what the plan's `pull` paths held,
 * stored as `pulled/<shard>/<device path without its leading slash>`, and the coverage files `coverage: true`
 * makes the runner write, stored as `coverage/<shard>/<file name>`. Neither belongs to a test case.
 */
export type DeviceFileKind = "pulled" | "coverage";

const deviceFileName = /^(pulled|coverage)\/[^/]+\/(.+)$/;

/** "pulled" or "coverage" for a file copied off the device, undefined for a capture or a log. */
export function deviceFileKind(name: string): DeviceFileKind | undefined {
  return deviceFileName.exec(name)?.[1] as DeviceFileKind | undefined;
}

export interface DeviceFile {
  artifact: Artifact;
  /**
   * Where it was on the device: "/sdcard/allure-results/a.json" for a pulled file (its artifact name less
   * "pulled/<shard>", the slash put back), "testbay-0.ec" for a coverage file (only its name is kept).
   */
  path: string;
}

/** The files one device run's attempt left of one kind: a shard of a device entry, as `artifactUrl` needs it. */
export interface ShardFiles {
  device: number;
  shard: number;
  attempt: number;
  files: DeviceFile[];
  bytes: number;
}

const byPath = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

/**
 * The run's files of `kind` by device entry, shard and attempt, in that order (the API lists artifacts by entry and
 * attempt, not shard), each group's files by device path. Groups that left none are absent.
 */
export function deviceFileGroups(items: readonly Artifact[], kind: DeviceFileKind): ShardFiles[] {
  const groups = new Map<string, ShardFiles>();
  for (const artifact of items) {
    const match = deviceFileName.exec(artifact.name);
    if (match?.[1] !== kind) continue;
    const rest = match[2] as string;
    const key = `${artifact.device}:${artifact.shard}:${artifact.attempt}`;
    let group = groups.get(key);
    if (!group) {
      group = {
        device: artifact.device,
        shard: artifact.shard,
        attempt: artifact.attempt,
        files: [],
        bytes: 0,
      };
      groups.set(key, group);
    }
    group.files.push({ artifact, path: kind === "pulled" ? `/${rest}` : rest });
    group.bytes += artifact.size_bytes;
  }
  for (const group of groups.values()) group.files.sort((a, b) => byPath(a.path, b.path));
  return [...groups.values()].sort(
    (a, b) => a.device - b.device || a.shard - b.shard || a.attempt - b.attempt,
  );
}

/** A folder of a group's files, with what it holds at any depth counted. */
export interface FileFolder {
  /**
   * As it is shown: one folder, or a chain of folders that hold nothing but the next one ("sdcard/Download"), as
   * GitHub and VS Code compact them; a top folder of device paths starts with "/" ("/sdcard/allure-results").
   */
  label: string;
  /** The folder's full path ("/sdcard/allure-results"): a stable key, unique in its tree. */
  path: string;
  folders: FileFolder[];
  files: DeviceFile[];
  fileCount: number;
  bytes: number;
}

/**
 * A group's files as folders, the way a file manager lists them: folders first, then files, each by name (numbers
 * in order: shot-2 before shot-10). The root is the device's "/" for pulled files, the group itself for coverage
 * files (names only, so it holds them all).
 */
export function fileTree(files: readonly DeviceFile[]): FileFolder {
  const root: FileFolder = { label: "", path: "", folders: [], files: [], fileCount: 0, bytes: 0 };
  for (const file of files) {
    const segments = file.path.split("/");
    const absolute = segments[0] === "";
    if (absolute) segments.shift();
    segments.pop();
    let folder = root;
    folder.fileCount++;
    folder.bytes += file.artifact.size_bytes;
    for (const segment of segments) {
      const path = folder === root && !absolute ? segment : `${folder.path}/${segment}`;
      let next = folder.folders.find((child) => child.path === path);
      if (!next) {
        next = { label: segment, path, folders: [], files: [], fileCount: 0, bytes: 0 };
        folder.folders.push(next);
      }
      next.fileCount++;
      next.bytes += file.artifact.size_bytes;
      folder = next;
    }
    folder.files.push(file);
  }
  const ordered = (folder: FileFolder): FileFolder => {
    // A folder with nothing but one folder in it is shown as one row with it: "sdcard/Download/screenshots".
    let compacted = folder;
    while (compacted !== root && compacted.files.length === 0 && compacted.folders.length === 1) {
      const only = compacted.folders[0] as FileFolder;
      compacted = { ...only, label: `${compacted.label}/${only.label}` };
    }
    return {
      ...compacted,
      folders: compacted.folders.map(ordered).sort((a, b) => byPath(a.label, b.label)),
      files: [...compacted.files].sort((a, b) => byPath(a.path, b.path)),
    };
  };
  const tree = ordered(root);
  // Top folders of device paths read as device paths.
  for (const folder of tree.folders) if (folder.path.startsWith("/")) folder.label = `/${folder.label}`;
  return tree;
}
