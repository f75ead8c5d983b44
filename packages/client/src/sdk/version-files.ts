import { stat } from "node:fs/promises";
import { TestbayApiError } from "./errors.ts";
import { segment, type Transport } from "./transport.ts";
import {
  putFile,
  RegisteredMeanwhile,
  refuseOversized,
  sha256File,
  type UploadOutcome,
  type UploadProgress,
} from "./upload.ts";

/** A version's file (API.md §14): what additional_apks installs and push puts on the device. */
export interface VersionFile {
  name: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
}

/** API.md §14's name rule, checked before anything is sent. */
export const versionFileNamePattern = /^[A-Za-z0-9._-]{1,100}$/;

export interface VersionFileUploadOptions {
  packageName: string;
  version: string;
  /** The name in the version (what plans' additional_apks and push[].file say). */
  name: string;
  /** Path of the file on disk. */
  file: string;
  onProgress?: (progress: UploadProgress) => void;
  maxUploadBytes?: () => Promise<number | undefined>;
  deadlineAt?: number;
  signal?: AbortSignal;
}

/** `uploaded`, `skipped` (the version has this very file under the name) or `already_landed` (rule 9). */
export interface VersionFileUploadResult {
  outcome: UploadOutcome;
  name: string;
  sha256: string;
  sizeBytes: number;
}

export const versionFilePath = (packageName: string, version: string, name?: string) =>
  `/apps/${segment(packageName)}/versions/${segment(version)}/files${name === undefined ? "" : `/${segment(name)}`}`;

/** `HEAD …/files/{name}`: the stored file's sha256 (its ETag), or undefined when the version has none by that name. */
export async function versionFileSha256(
  transport: Transport,
  packageName: string,
  version: string,
  name: string,
): Promise<string | undefined> {
  try {
    const head = await transport.send({ method: "HEAD", path: versionFilePath(packageName, version, name) });
    return head.headers.get("etag")?.replace(/^W\//, "").replaceAll('"', "").toLowerCase() || "";
  } catch (error) {
    if (
      error instanceof TestbayApiError &&
      error.status === 404 &&
      error.code !== "app_version_not_found" &&
      error.code !== "app_not_found"
    )
      return undefined;
    throw error;
  }
}

/**
 * A version's files do not change: another file under a taken name would have the old one tested, so it is an
 * error naming both sha256 and what to do instead.
 */
function differentFileError(
  options: VersionFileUploadOptions,
  storedSha: string,
  localSha: string,
  localBytes: number,
) {
  const { packageName, version, name, file } = options;
  return new TestbayApiError({
    status: 409,
    method: "PUT",
    path: versionFilePath(packageName, version, name),
    problem: {
      code: "version_file_exists",
      reason: "different_file",
      detail: `${packageName} ${version} has another file named ${name} (sha256 ${storedSha.slice(0, 12)}…) than ${file} (sha256 ${localSha.slice(0, 12)}…, ${localBytes} bytes); a version's files cannot be replaced.`,
      fix: `Upload the changed file with a new build version (testbay upload --app ${packageName} --version NEW_VERSION --file APP --extra-file ${name}=${file}), or under another name.`,
    },
  });
}

/**
 * Uploads one version file by the rule of the version upload (CLIENT.md rules 9–11): HEAD first and no
 * transfer when the version has this very file under the name; an error that says so when it has another;
 * the PUT streamed from disk and retried like the binary's, a 409 after a retry judged by sha256.
 */
export async function uploadVersionFile(
  transport: Transport,
  options: VersionFileUploadOptions,
): Promise<VersionFileUploadResult> {
  const { packageName, version, name, file } = options;
  if (!versionFileNamePattern.test(name)) {
    throw new TestbayApiError({
      status: 400,
      method: "PUT",
      path: versionFilePath(packageName, version, name),
      problem: {
        code: "invalid_request",
        detail: `The version file name ${JSON.stringify(name)} is not 1 to 100 letters, digits, '.', '_' or '-'. Nothing was sent.`,
        fix: `Name it with those characters: --extra-file ${name.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100) || "NAME"}=${file}`,
      },
    });
  }
  const { size } = await stat(file);
  const judge = async (storedSha: string | undefined) => {
    if (storedSha === undefined) return undefined;
    const local = await sha256File(file);
    if (storedSha === local) return local;
    throw differentFileError(options, storedSha, local, size);
  };
  const before = await judge(await versionFileSha256(transport, packageName, version, name));
  if (before) return { outcome: "skipped", name, sha256: before, sizeBytes: size };

  const path = versionFilePath(packageName, version, name);
  await refuseOversized({ maxUploadBytes: options.maxUploadBytes, size, path, file, what: "version file" });
  try {
    const stored = await putFile<VersionFile>(transport, {
      path,
      file,
      size,
      onProgress: options.onProgress,
      deadlineAt: options.deadlineAt,
      signal: options.signal,
      landed: async () => (await versionFileSha256(transport, packageName, version, name)) !== undefined,
    });
    return { outcome: "uploaded", name, sha256: stored.sha256, sizeBytes: size };
  } catch (error) {
    const storedMeanwhile =
      error instanceof RegisteredMeanwhile ||
      (error instanceof TestbayApiError && error.code === "version_file_exists");
    if (!storedMeanwhile) throw error;
    const same = await judge(await versionFileSha256(transport, packageName, version, name));
    if (!same) throw error;
    return { outcome: "already_landed", name, sha256: same, sizeBytes: size };
  }
}
