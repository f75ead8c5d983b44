import type { Readable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import { ApiError, remedy, sizeText } from "../../errors.ts";
import { decodeCursor, toPage } from "../../http/pagination.ts";
import type { ExpectedDigest } from "../../http/upload/content-digest.ts";
import { fileSizeExceeded } from "../../http/upload/receive-verified.ts";
import { newId } from "../../ids.ts";
import type { BlobStore, ByteRange } from "../../storage/index.ts";
import { removeStaleStagedFiles } from "../../storage/stale-staged-files.ts";
import type { AppRecord, AppsService } from "../apps/index.ts";
import type { VersionFilesRepo } from "./files/version-files.repo.ts";
import { type BinaryMetadata, inspectBinary, UnsupportedBinaryError } from "./inspection/index.ts";
import type { BlobOwner } from "./orphaned-blobs.ts";
import { testPackageView } from "./test-packages/test-package-view.ts";
import type { TestPackageRecord, TestPackagesRepo } from "./test-packages/test-packages.repo.ts";
import { storeVersionFile } from "./upload/store-version-file.ts";
import type { RetentionCandidate, VersionRecord, VersionsRepo } from "./versions.repo.ts";

/** `testPackage`: the version's test package (API.md §4b), null when it has none. */
export function versionView(app: AppRecord, version: VersionRecord, testPackage: TestPackageRecord | null) {
  return {
    package_name: app.packageName,
    version: version.version,
    size_bytes: version.sizeBytes,
    sha256: version.sha256,
    created_at: version.createdAt,
    binary: version.binary,
    test_package: testPackage && testPackageView(app, version, testPackage),
  };
}

/** A version about to be uploaded: its app, and the version it will be (checkBeforeBody). */
export interface VersionUploadTarget {
  app: AppRecord;
  version: string;
}

export interface VersionsServiceOptions {
  repo: VersionsRepo;
  /** Read for the version object's `test_package`. */
  testPackages: TestPackagesRepo;
  /** The versions' files (API.md §14), which a trigger checks its plans' steps against. */
  files: VersionFilesRepo;
  apps: AppsService;
  store: BlobStore;
  clock: Clock;
  /** Local directory where bodies are received before they are verified and moved into the store. */
  stagingDir: string;
  maxUploadBytes: number;
  /** A body with no byte for this long is cut off (TESTBAY_BODY_IDLE_TIMEOUT_SECONDS); unset: never. */
  bodyIdleTimeoutMs?: number;
  /** Told after an upload's version.uploaded event is committed (webhooks fan it out at once). */
  onEventAppended?: () => void;
}

export class VersionsService {
  constructor(private readonly options: VersionsServiceOptions) {}

  private fileSizeExceeded(detail: string): ApiError {
    return fileSizeExceeded(this.options.maxUploadBytes, detail);
  }

  /**
   * Everything an upload can be refused for from its headers alone, decided before a byte of the body is
   * read: unknown app (404), registered version (409), declared size over the limit (413).
   */
  async checkBeforeBody(
    organizationId: string,
    packageName: string,
    version: string,
    contentLength: number | undefined,
  ): Promise<VersionUploadTarget> {
    const app = await this.options.apps.get(organizationId, packageName);
    if (await this.options.repo.exists(app.id, version)) throw this.versionExists(packageName, version);
    if (contentLength !== undefined && contentLength > this.options.maxUploadBytes) {
      throw this.fileSizeExceeded(
        `The binary is ${contentLength} bytes; the limit is ${sizeText(this.options.maxUploadBytes)}.`,
      );
    }
    return { app, version };
  }

  private versionExists(packageName: string, version: string): ApiError {
    return new ApiError("app_version_exists", {
      detail: `Version ${version} of ${packageName} is registered already; nothing was uploaded.`,
      fix: remedy.bumpVersion(packageName, version),
    });
  }

  /**
   * Receives the body, verifies and inspects it, moves it into the store and records the version, in that
   * order: until the record is written the version does not exist, and a failure at any step leaves
   * neither a version nor a stray file.
   */
  async receive(
    target: VersionUploadTarget,
    body: Readable,
    digest: ExpectedDigest | undefined,
  ): Promise<VersionRecord> {
    const { store, repo, clock, stagingDir, maxUploadBytes, bodyIdleTimeoutMs } = this.options;
    const { app, version } = target;
    const blobId = newId("blob", clock.now());
    const record = await storeVersionFile(body, digest, {
      stagingDir,
      blobId,
      store,
      maxUploadBytes,
      bodyIdleTimeoutMs,
      describe: async (received): Promise<VersionRecord> => {
        const binary = await this.inspect(received.file, received.size);
        checkBinaryIsTheApps(binary, app, version);
        const now = clock.now();
        return {
          id: newId("ver", now),
          appId: app.id,
          version,
          sizeBytes: received.size,
          sha256: received.sha256,
          blobKey: `versions/${app.organizationId}/${blobId}`,
          binary,
          createdAt: isoTime(now),
        };
      },
      insert: (candidate) =>
        repo.insert(candidate, {
          organizationId: app.organizationId,
          data: versionView(app, candidate, null),
        }),
      exists: () => this.versionExists(app.packageName, version),
    });
    this.options.onEventAppended?.();
    return record;
  }

  private async inspect(file: string, size: number) {
    if (size === 0) {
      throw new ApiError("unsupported_binary", {
        detail: "The body is empty.",
        fix: "Send the binary itself as the request body (for example curl --data-binary @app.apk or -T app.apk).",
      });
    }
    try {
      return await inspectBinary(file);
    } catch (error) {
      if (!(error instanceof UnsupportedBinaryError)) throw error;
      throw new ApiError("unsupported_binary", {
        detail: `The body is not an APK, AAB, IPA or zipped .app: ${error.message}`,
      });
    }
  }

  async get(organizationId: string, packageName: string, version: string) {
    const app = await this.options.apps.get(organizationId, packageName);
    const record = await this.options.repo.find(app.id, version);
    if (!record) {
      throw new ApiError("app_version_not_found", {
        detail: `Version ${version} of ${packageName} is not registered.`,
        fix: remedy.uploadVersion(packageName, version),
      });
    }
    return { app, version: record };
  }

  async list(organizationId: string, packageName: string, query: { limit?: number; cursor?: string }) {
    const app = await this.options.apps.get(organizationId, packageName);
    const limit = query.limit ?? 50;
    const rows = await this.options.repo.list(app.id, limit, decodeCursor(query.cursor));
    const testPackages = await this.options.testPackages.forVersions(rows.map((row) => row.id));
    return toPage(rows, limit, (row) => versionView(app, row, testPackages.get(row.id) ?? null));
  }

  /** The version's test package (instrumentation APK), if one was uploaded. */
  testPackageOf(version: VersionRecord): Promise<TestPackageRecord | undefined> {
    return this.options.testPackages.find(version.id);
  }

  /** The names of the files uploaded with the version (API.md §14). */
  async fileNamesOf(version: VersionRecord): Promise<Set<string>> {
    return new Set((await this.options.files.list(version.id)).map((file) => file.name));
  }

  /** The version object of GET …/versions/{version}, with its test package. */
  async view(app: AppRecord, version: VersionRecord) {
    return versionView(app, version, (await this.options.testPackages.find(version.id)) ?? null);
  }

  readBinary(version: VersionRecord, range?: ByteRange): Promise<Readable> {
    return this.options.store.read(version.blobKey, range);
  }

  /**
   * Deletes a version, its binary and its test package (admin only; see the route). Refused with 409
   * app_version_in_use while an execution of it is queued or running: its agent still needs the binary.
   * Past executions keep their records, package name and version as they were; the version itself then
   * answers 404, and the same version can be uploaded again.
   */
  async delete(organizationId: string, packageName: string, version: string): Promise<void> {
    const { app, version: record } = await this.get(organizationId, packageName, version);
    const outcome = await this.deleteRecord({
      organizationId: app.organizationId,
      packageName: app.packageName,
      version: record,
    });
    if (!outcome.deleted) {
      const first = outcome.activeExecutionIds[0] ?? "";
      throw new ApiError("app_version_in_use", {
        detail: `Version ${version} of ${packageName} has executions queued or running (${outcome.activeExecutionIds.join(", ")}); nothing was deleted.`,
        fix: `Wait until they end, or cancel them (POST /v1/executions/${first}/cancel, or testbay cancel ${first}), then delete the version again.`,
        extra: { execution_ids: outcome.activeExecutionIds },
      });
    }
  }

  /** Marks the version deleted, then removes its blobs; a blob left by a failure here is swept at start-up. */
  private async deleteRecord(candidate: RetentionCandidate) {
    const { repo, store, clock } = this.options;
    const outcome = await repo.markDeleted(
      candidate.organizationId,
      candidate.packageName,
      candidate.version,
      isoTime(clock.now()),
    );
    if (outcome.deleted) for (const key of outcome.blobKeys) await store.delete(key);
    return outcome;
  }

  /**
   * Retention (TESTBAY_KEEP_VERSIONS): deletes the versions of each app beyond its newest `keep`, as
   * DELETE does, skipping those with queued or running executions (a later round deletes them). Runs in
   * bounded batches so one round never holds much in memory. Returns how many versions were deleted.
   */
  async enforceRetention(keep: number, log: FastifyBaseLogger, batch = 100): Promise<number> {
    let deleted = 0;
    const skipped = new Set<string>();
    for (;;) {
      const candidates = (await this.options.repo.beyondNewest(keep, batch + skipped.size)).filter(
        (candidate) => !skipped.has(candidate.version.id),
      );
      if (candidates.length === 0) return deleted;
      for (const candidate of candidates) {
        const outcome = await this.deleteRecord(candidate);
        if (!outcome.deleted) {
          skipped.add(candidate.version.id);
          continue;
        }
        deleted++;
        log.info(
          { package_name: candidate.packageName, version: candidate.version.version, keep },
          "retention deleted an old version and its binary",
        );
      }
    }
  }

  /** Its binaries, for the start-up sweep of unrecorded ones (orphaned-blobs.ts). */
  blobOwner(): BlobOwner {
    return {
      prefix: "versions/",
      what: "binary",
      isReferenced: (key) => this.options.repo.isReferenced(key),
    };
  }

  /**
   * Start-up housekeeping after a crash: removes half-received bodies from the staging directory (stale-staged-files.ts; unrecorded
   * blobs are swept by orphaned-blobs.ts, with this service's blobOwner).
   */
  async cleanUp(log: FastifyBaseLogger): Promise<void> {
    await removeStaleStagedFiles(this.options.stagingDir, log, "an upload");
  }
}

/** A version's binary must be the registered app's: its platform and its package name. */
function checkBinaryIsTheApps(binary: BinaryMetadata, app: AppRecord, version: string): void {
  if (binary.platform !== app.platform) {
    throw new ApiError("unsupported_binary", {
      reason: "platform_mismatch",
      detail: `${app.packageName} is registered as an ${app.platform} app, but this is an ${binary.platform} binary (${binary.format}).`,
      fix: `Upload the ${app.platform} build of ${app.packageName}, or register the ${binary.platform} app separately.`,
    });
  }
  if (binary.package_name !== app.packageName) {
    throw new ApiError("binary_package_mismatch", {
      detail: `The binary declares package ${binary.package_name}, but it was uploaded as ${app.packageName}.`,
      fix: `Upload the build of ${app.packageName}, or register ${binary.package_name} (testbay apps create --app ${binary.package_name} --platform ${binary.platform}) and upload this binary there: PUT /v1/apps/${binary.package_name}/versions/${version}, or testbay upload --app ${binary.package_name} --version ${version} --file PATH.`,
      extra: { binary_package_name: binary.package_name, package_name: app.packageName },
    });
  }
}
