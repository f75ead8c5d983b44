import path from "node:path";
import { type ConversionContext, listOf } from "./conversion-context.ts";
import type { VersionFileSource } from "./flank-plan.ts";

/** API.md §14: at most 20 files per version, named [A-Za-z0-9._-]{1,100}; at most 10 additional APKs. */
const maxVersionFiles = 20;
const maxAdditionalApks = 10;
const maxPaths = 20;

/** A version file name for a local path: its base name, with characters outside the allowed set as `_`. */
function fileNameOf(localPath: string, taken: Set<string>): string {
  const base =
    path.posix
      .basename(localPath.replaceAll("\\", "/"))
      .replace(/[^A-Za-z0-9._-]/g, "_")
      .slice(0, 96) || "file";
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${n}-${base}`.slice(0, 100);
  taken.add(name);
  return name;
}

export interface DeviceFiles {
  files: VersionFileSource[];
  additionalApks: string[] | undefined;
  push: { file: string; to: string }[] | undefined;
  pull: string[] | undefined;
  pullFilter: string[] | undefined;
}

/**
 * The files a run moves to and from the device: `gcloud.other-files` ({device path: local file}) and
 * `gcloud.additional-apks` become version files (+ `push` and `additional_apks`), `gcloud.directories-to-pull`
 * → `pull`, `flank.files-to-download` → `pull_filter` (regular expressions on the pulled file's device path).
 */
export function deviceFilesOf(context: ConversionContext): DeviceFiles {
  const taken = new Set<string>();
  const files: VersionFileSource[] = [];
  const local = (value: unknown, where: () => void): string | undefined => {
    if (typeof value === "string" && value.trim() !== "") return value;
    where();
    return undefined;
  };

  let additionalApks: string[] | undefined;
  const apks = context.gcloud("additional-apks");
  if (apks) {
    listOf(apks.value, { commas: true }).forEach((value, i) => {
      const file = local(value, () =>
        context.error(apks, `gcloud.additional-apks[${i}] must be a path to an APK`, [String(i)]),
      );
      if (!file) return;
      if (file.startsWith("gs://")) {
        context.error(
          apks,
          `gcloud.additional-apks[${i}] ${file}: Cloud Storage is not read: download it first (gsutil cp ${file} .) and name the local file`,
          [String(i)],
        );
        return;
      }
      const name = fileNameOf(file, taken);
      files.push({ name, path: file, key: `gcloud.additional-apks[${i}]` });
      additionalApks = [...(additionalApks ?? []), name];
    });
    if ((additionalApks?.length ?? 0) > maxAdditionalApks) {
      context.error(
        apks,
        `gcloud.additional-apks has ${additionalApks?.length} APKs, at most ${maxAdditionalApks}`,
      );
    }
  }

  let push: { file: string; to: string }[] | undefined;
  const other = context.gcloud("other-files");
  if (other) {
    // A mapping, or (as Flank's own commented reference writes it) a list of one-entry mappings.
    const pairs: [string, unknown, string[]][] = [];
    if (Array.isArray(other.value)) {
      other.value.forEach((item, i) => {
        for (const [to, file] of Object.entries((item ?? {}) as Record<string, unknown>))
          pairs.push([to, file, [String(i), to]]);
      });
    } else if (other.value && typeof other.value === "object") {
      for (const [to, file] of Object.entries(other.value as Record<string, unknown>))
        pairs.push([to, file, [to]]);
    } else if (other.value !== null) {
      context.error(other, "gcloud.other-files must be a mapping of device path: local file");
    }
    for (const [to, value, at] of pairs) {
      const file = local(value, () =>
        context.error(other, `gcloud.other-files.${to} must name a local file`, at),
      );
      if (!file) continue;
      if (!to.startsWith("/")) {
        context.error(
          other,
          `gcloud.other-files: the device path ${to} must be absolute (e.g. /sdcard/${to})`,
          at,
        );
        continue;
      }
      if (file.startsWith("gs://")) {
        context.error(
          other,
          `gcloud.other-files.${to} ${file}: Cloud Storage is not read: download it first (gsutil cp ${file} .) and name the local file`,
          at,
        );
        continue;
      }
      const name = fileNameOf(file, taken);
      files.push({ name, path: file, key: `gcloud.other-files[${to}]` });
      push = [...(push ?? []), { file: name, to }];
    }
  }
  const filesKey = other ?? apks;
  if (filesKey && files.length > maxVersionFiles) {
    context.error(
      filesKey,
      `other-files and additional-apks name ${files.length} files, a version holds at most ${maxVersionFiles}`,
    );
  }

  const pull = pathsOf(context, "directories-to-pull");
  let pullFilter: string[] | undefined;
  const download = context.flank("files-to-download");
  if (download) {
    pullFilter = [];
    listOf(download.value, { commas: false }).forEach((pattern, i) => {
      try {
        new RegExp(String(pattern));
        pullFilter?.push(String(pattern));
      } catch (error) {
        context.error(
          download,
          `flank.files-to-download[${i}] is not a regular expression: ${(error as Error).message}`,
          [String(i)],
        );
      }
    });
    if (!pull)
      context.warn(download, "flank.files-to-download has nothing to filter: no gcloud.directories-to-pull");
    if (pullFilter.length === 0) pullFilter = undefined;
  }
  return { files, additionalApks, push, pull, pullFilter };
}

function pathsOf(context: ConversionContext, key: "directories-to-pull"): string[] | undefined {
  const value = context.gcloud(key);
  if (!value) return undefined;
  const paths: string[] = [];
  listOf(value.value, { commas: true }).forEach((item, i) => {
    if (typeof item !== "string" || !item.startsWith("/")) {
      context.error(
        value,
        `gcloud.${key}[${i}] ${JSON.stringify(item)} must be an absolute device path (e.g. /sdcard/screenshots)`,
        [String(i)],
      );
      return;
    }
    paths.push(item);
  });
  if (paths.length > maxPaths)
    context.error(value, `gcloud.${key} has ${paths.length} paths, at most ${maxPaths}`);
  return paths.length > 0 ? paths : undefined;
}
