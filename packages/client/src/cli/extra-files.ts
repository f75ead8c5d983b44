import { access } from "node:fs/promises";
import type { VersionFileUploadResult } from "../sdk/version-files.ts";
import { versionFileNamePattern } from "../sdk/version-files.ts";
import { UsageError } from "./exit-codes.ts";
import { formatBytes } from "./output.ts";
import type { Session } from "./session.ts";
import { progressReporter } from "./upload-progress.ts";

/** One `--extra-file NAME=PATH`: a version file (API.md §14) and where it is on this machine. */
export interface ExtraFile {
  name: string;
  path: string;
}

/** API.md §14: at most 20 files a version. */
const maxFiles = 20;

/** The repeatable `--extra-file NAME=PATH` (not comma-split: a path may hold commas). */
export const collectExtraFile = (value: string, previous: string[]) => [...previous, value];

/**
 * Reads the --extra-file values and looks for every file before anything is sent: a typo in the seventh must
 * not leave a version with six files.
 */
export async function checkExtraFiles(session: Session, values: string[]): Promise<ExtraFile[]> {
  const files: ExtraFile[] = [];
  for (const value of values) {
    const split = value.indexOf("=");
    const name = split > 0 ? value.slice(0, split) : "";
    const file = split > 0 ? value.slice(split + 1) : "";
    if (!name || !file) {
      throw new UsageError(
        `--extra-file ${value}: write NAME=PATH, the name plans use (additional_apks, push[].file) and the local file, e.g. --extra-file users.json=fixtures/users.json`,
      );
    }
    if (!versionFileNamePattern.test(name)) {
      throw new UsageError(
        `--extra-file ${value}: the name ${JSON.stringify(name)} must be 1 to 100 letters, digits, '.', '_' or '-'.`,
      );
    }
    if (files.some((known) => known.name === name)) {
      throw new UsageError(
        `--extra-file ${value}: the name ${name} is given twice; each file needs its own name.`,
      );
    }
    const resolved = session.resolvePath(file);
    try {
      await access(resolved);
    } catch {
      throw new UsageError(
        `--extra-file ${name}=${file}: no such file (looked for ${resolved}). Nothing was sent.`,
      );
    }
    files.push({ name, path: resolved });
  }
  if (files.length > maxFiles) {
    throw new UsageError(`${files.length} --extra-file options: a version holds at most ${maxFiles} files.`);
  }
  return files;
}

/** Uploads the version's files after the build (the version must exist first), each HEAD-first. */
export async function uploadExtraFiles(
  session: Session,
  options: { app: string; version: string },
  files: ExtraFile[],
): Promise<VersionFileUploadResult[]> {
  const results: VersionFileUploadResult[] = [];
  for (const file of files) {
    const what = `file ${file.name} of ${options.app} ${options.version}`;
    const progress = progressReporter(session, `the ${what}`);
    try {
      const result = await session.testbay().versionFiles.upload({
        packageName: options.app,
        version: options.version,
        name: file.name,
        file: file.path,
        onProgress: progress.onProgress,
      });
      progress.stop();
      const sha = `sha256 ${result.sha256.slice(0, 12)}…`;
      if (result.outcome === "skipped") {
        session.say(
          `The ${what} is uploaded already, the same file (${sha}): skipped (nothing was transferred).`,
        );
      } else if (result.outcome === "already_landed") {
        session.say(`The ${what} was stored meanwhile, the same file (${sha}): nothing more to do.`);
      } else {
        session.say(`Uploaded the ${what}: ${formatBytes(result.sizeBytes)}, ${sha}.`);
      }
      results.push(result);
    } catch (error) {
      progress.stop();
      throw error;
    }
  }
  return results;
}

/** The version files as --json prints them. */
export function extraFilesJson(results: VersionFileUploadResult[]) {
  return results.map((result) => ({
    name: result.name,
    outcome: result.outcome,
    size_bytes: result.sizeBytes,
    sha256: result.sha256,
  }));
}
