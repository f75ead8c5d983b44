import type { Readable } from "node:stream";
import { type Clock, isoTime } from "../../../clock.ts";
import { ApiError } from "../../../errors.ts";
import type { ExpectedDigest } from "../../../http/upload/content-digest.ts";
import { newId } from "../../../ids.ts";
import type { BlobStore, ByteRange } from "../../../storage/index.ts";
import type { AppRecord } from "../../apps/index.ts";
import type { BlobOwner } from "../orphaned-blobs.ts";
import { storeVersionFile } from "../upload/store-version-file.ts";
import type { VersionRecord } from "../versions.repo.ts";
import type { VersionsService } from "../versions.service.ts";
import type { VersionFileRecord, VersionFilesRepo } from "./version-files.repo.ts";

/** API.md §14: each file at most 100 MiB, at most 20 files a version. */
export const versionFileLimits = { maxBytes: 100 * 1024 * 1024, maxFiles: 20 } as const;

export interface VersionFilesServiceOptions {
  repo: VersionFilesRepo;
  versions: VersionsService;
  store: BlobStore;
  clock: Clock;
  /** The version uploads' staging directory: its clean-up at start-up covers these bodies too. */
  stagingDir: string;
  /** The server's upload limit (TESTBAY_MAX_UPLOAD_BYTES): a version file is held to it too when it is lower. */
  maxUploadBytes: number;
  bodyIdleTimeoutMs?: number;
}

export interface VersionFileTarget {
  app: AppRecord;
  version: VersionRecord;
  name: string;
}

/** Blob keys start with [a-z0-9]+ (assertValidKey): no hyphen; not "versions/", which versions' sweep owns. */
const KEY_PREFIX = "versionfiles/";

/**
 * Version files (API.md §14): what a version's tests need on the device besides the app and the test APK
 * (additional APKs, files pushed before the run), uploaded by name after the version, streamed and atomic by the
 * rules of the version's own upload (storeVersionFile), and kept until the version is deleted.
 */
export class VersionFilesService {
  constructor(private readonly options: VersionFilesServiceOptions) {}

  private get maxBytes(): number {
    return Math.min(versionFileLimits.maxBytes, this.options.maxUploadBytes);
  }

  /**
   * The refusals an upload gets from its headers alone, before a byte of its body is read: unknown app or
   * version (404), the name taken or the version full (409), a declared size over the limit (413).
   */
  async checkBeforeBody(
    organizationId: string,
    packageName: string,
    version: string,
    name: string,
    contentLength: number | undefined,
  ): Promise<VersionFileTarget> {
    const target = await this.options.versions.get(organizationId, packageName, version);
    const files = await this.options.repo.list(target.version.id);
    if (files.some((file) => file.name === name)) throw exists(packageName, version, name);
    if (files.length >= versionFileLimits.maxFiles) throw full(packageName, version);
    const { maxBytes } = this;
    if (contentLength !== undefined && contentLength > maxBytes) {
      throw new ApiError("file_size_exceeded", {
        detail: `The file ${name} is ${contentLength} bytes; a version file may have at most ${maxBytes} bytes.`,
        fix: "Make the file smaller (compress fixtures and unpack them in the test), or split it into several version files.",
        extra: { limit_bytes: maxBytes },
      });
    }
    return { ...target, name };
  }

  /** Receives and verifies the body, moves it into the store and records it: until then the file does not exist. */
  async receive(
    target: VersionFileTarget,
    body: Readable,
    digest: ExpectedDigest | undefined,
  ): Promise<VersionFileRecord> {
    const { store, repo, clock, stagingDir, bodyIdleTimeoutMs } = this.options;
    const { app, version, name } = target;
    const blobId = newId("blob", clock.now());
    let outcome: "exists" | "limit" = "exists";
    return storeVersionFile(body, digest, {
      stagingDir,
      blobId,
      store,
      maxUploadBytes: this.maxBytes,
      bodyIdleTimeoutMs,
      describe: async (received) => ({
        appVersionId: version.id,
        name,
        sizeBytes: received.size,
        sha256: received.sha256,
        blobKey: `${KEY_PREFIX}${app.organizationId}/${blobId}`,
        createdAt: isoTime(clock.now()),
      }),
      insert: async (record) => {
        const inserted = await repo.insert(record, versionFileLimits.maxFiles);
        if (inserted === "inserted") return true;
        outcome = inserted;
        return false;
      },
      // Another upload committed first while this body streamed: of that name, or the version's last free place.
      exists: () =>
        outcome === "limit"
          ? full(app.packageName, version.version)
          : exists(app.packageName, version.version, name),
    });
  }

  /** The version and its file by name; 404 app_not_found / app_version_not_found / version_file_not_found. */
  async get(organizationId: string, packageName: string, version: string, name: string) {
    const target = await this.options.versions.get(organizationId, packageName, version);
    const file = await this.options.repo.find(target.version.id, name);
    if (!file) throw versionFileNotFound(packageName, version, name);
    return { ...target, file };
  }

  /** The version and its files, by name. */
  async list(organizationId: string, packageName: string, version: string) {
    const target = await this.options.versions.get(organizationId, packageName, version);
    return { ...target, files: await this.options.repo.list(target.version.id) };
  }

  /** A version's files by its row id, for the jobs of its executions and the checks of a trigger. */
  ofVersion(appVersionId: string): Promise<VersionFileRecord[]> {
    return this.options.repo.list(appVersionId);
  }

  /** A file of the version an execution runs, for its agent (features/agent checks the lease first); else 404. */
  async ofExecution(executionId: string, name: string): Promise<VersionFileRecord> {
    const file = await this.options.repo.findForExecution(executionId, name);
    if (!file) {
      throw new ApiError("version_file_not_found", {
        detail: `The version execution ${executionId} runs has no file named ${name}.`,
        fix: "Download the files the job lists in version_files, by their url.",
      });
    }
    return file;
  }

  read(record: VersionFileRecord, range?: ByteRange): Promise<Readable> {
    return this.options.store.read(record.blobKey, range);
  }

  /** Its blobs, for the start-up sweep of unrecorded ones (orphaned-blobs.ts). */
  blobOwner(): BlobOwner {
    return {
      prefix: KEY_PREFIX,
      what: "version file",
      isReferenced: (key) => this.options.repo.isReferenced(key),
    };
  }
}

function exists(packageName: string, version: string, name: string): ApiError {
  return new ApiError("version_file_exists", {
    detail: `Version ${version} of ${packageName} has a file named ${name} already; nothing was uploaded.`,
    fix: `A version's files do not change: upload a changed file with a new version of the build (testbay upload --app ${packageName} --version NEW_VERSION --file BUILD --extra-file ${name}=PATH). HEAD /v1/apps/${packageName}/versions/${version}/files/${name} answers 200 when it is there.`,
  });
}

function full(packageName: string, version: string): ApiError {
  return new ApiError("version_files_limit", {
    detail: `Version ${version} of ${packageName} has ${versionFileLimits.maxFiles} files, the most a version may have; nothing was uploaded.`,
    fix: `Bundle small fixtures into one archive pushed once (and unpacked by the test), or leave out files the plan does not name; GET /v1/apps/${packageName}/versions/${version}/files lists them.`,
    extra: { limit: versionFileLimits.maxFiles },
  });
}

/**
 * 404 version_file_not_found, with the upload that adds the file; `detail` says what needed it (a trigger whose
 * plan names it, features/triggers/version-file-steps.ts).
 */
export function versionFileNotFound(
  packageName: string,
  version: string,
  name: string,
  detail = `Version ${version} of ${packageName} has no file named ${name}.`,
): ApiError {
  return new ApiError("version_file_not_found", {
    detail,
    fix: `Upload it with the version: testbay upload --app ${packageName} --version ${version} --file BUILD --extra-file ${name}=PATH (the build is skipped when it is registered already), or PUT /v1/apps/${packageName}/versions/${version}/files/${name}.`,
    extra: { name },
  });
}
