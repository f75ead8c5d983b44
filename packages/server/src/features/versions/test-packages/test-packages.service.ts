import type { Readable } from "node:stream";
import type { Clock } from "../../../clock.ts";
import { isoTime } from "../../../clock.ts";
import { ApiError, remedy } from "../../../errors.ts";
import type { ExpectedDigest } from "../../../http/upload/content-digest.ts";
import { fileSizeExceeded } from "../../../http/upload/receive-verified.ts";
import { newId } from "../../../ids.ts";
import type { BlobStore, ByteRange } from "../../../storage/index.ts";
import type { AppRecord } from "../../apps/index.ts";
import {
  inspectTestPackage,
  type TestPackageContent,
  UnsupportedBinaryError,
  XctestPackageError,
} from "../inspection/index.ts";
import type { BlobOwner } from "../orphaned-blobs.ts";
import { storeVersionFile } from "../upload/store-version-file.ts";
import type { VersionRecord } from "../versions.repo.ts";
import type { VersionsService } from "../versions.service.ts";
import type { TestPackageRecord, TestPackagesRepo } from "./test-packages.repo.ts";

export interface TestPackagesServiceOptions {
  repo: TestPackagesRepo;
  versions: VersionsService;
  store: BlobStore;
  clock: Clock;
  /** The version uploads' staging directory: its clean-up at start-up covers these bodies too. */
  stagingDir: string;
  maxUploadBytes: number;
  bodyIdleTimeoutMs?: number;
}

export interface TestPackageTarget {
  app: AppRecord;
  version: VersionRecord;
}

/** Blob keys start with [a-z0-9]+ (assertValidKey): no hyphen. */
const KEY_PREFIX = "testpackages/";

/** Test packages (API.md §4b): uploaded after their version, by the same rules as the version's binary. */
export class TestPackagesService {
  constructor(private readonly options: TestPackagesServiceOptions) {}

  /**
   * Everything an upload can be refused for from its headers alone, decided before a byte of the body is
   * read: unknown app or version (404), a test package already there (409), declared size over the limit (413).
   */
  async checkBeforeBody(
    organizationId: string,
    packageName: string,
    version: string,
    contentLength: number | undefined,
  ): Promise<TestPackageTarget> {
    const target = await this.options.versions.get(organizationId, packageName, version);
    if (await this.options.repo.find(target.version.id)) throw this.exists(packageName, version);
    const { maxUploadBytes } = this.options;
    if (contentLength !== undefined && contentLength > maxUploadBytes) {
      throw fileSizeExceeded(
        maxUploadBytes,
        `The test package is ${contentLength} bytes; the limit is ${maxUploadBytes} bytes.`,
      );
    }
    return target;
  }

  private exists(packageName: string, version: string): ApiError {
    return new ApiError("test_package_exists", {
      detail: `Version ${version} of ${packageName} has a test package already; nothing was uploaded.`,
      fix: `A version has one test package: upload changed tests with a new version (testbay upload --app ${packageName} --version NEW_VERSION --file PATH --test-file PATH). HEAD /v1/apps/${packageName}/versions/${version}/test-package answers 200 when it is there.`,
    });
  }

  /**
   * Receives, verifies and inspects the body, moves it into the store and records it, in that order: until
   * the record is written there is no test package, and a failure at any step leaves no record and no file.
   */
  async receive(
    target: TestPackageTarget,
    body: Readable,
    digest: ExpectedDigest | undefined,
  ): Promise<TestPackageRecord> {
    const { store, repo, clock, stagingDir, maxUploadBytes, bodyIdleTimeoutMs } = this.options;
    const { app, version } = target;
    const blobId = newId("blob", clock.now());
    return storeVersionFile(body, digest, {
      stagingDir,
      blobId,
      store,
      maxUploadBytes,
      bodyIdleTimeoutMs,
      describe: async (received) => {
        const content = await this.inspect(received.file, received.size);
        checkTargetsApp(content, app, version);
        return {
          ...content,
          appVersionId: version.id,
          sizeBytes: received.size,
          sha256: received.sha256,
          blobKey: `${KEY_PREFIX}${app.organizationId}/${blobId}`,
          createdAt: isoTime(clock.now()),
        };
      },
      insert: (record) => repo.insert(record),
      exists: () => this.exists(app.packageName, version.version),
    });
  }

  private async inspect(file: string, size: number): Promise<TestPackageContent> {
    if (size === 0) {
      throw new ApiError("unsupported_binary", {
        detail: "The body is empty.",
        fix: "Send the test package itself as the request body (for example curl -T app-debug-androidTest.apk, or a zip of xcodebuild build-for-testing output for iOS).",
      });
    }
    try {
      return await inspectTestPackage(file);
    } catch (error) {
      if (error instanceof XctestPackageError) {
        throw new ApiError("unsupported_binary", {
          reason: "xctest_unreadable",
          detail: `The body is a zip with an .xctestrun, but not an XCUITest bundle we can run: ${error.message}.`,
          fix: "Run xcodebuild build-for-testing, then zip what it wrote to Build/Products (cd Build/Products && zip -r ../tests.zip .): one .xctestrun with the -Runner.app and the test bundles beside it (the app under test may be left out: the version's own app is the one tested; app-hosted unit tests need the app, which holds their bundle).",
        });
      }
      if (!(error instanceof UnsupportedBinaryError)) throw error;
      throw new ApiError("unsupported_binary", {
        detail: `The body is neither an Android instrumentation APK nor an iOS XCUITest bundle: ${error.message}`,
        fix: "Upload the test APK Gradle builds (assembleAndroidTest: app/build/outputs/apk/androidTest/debug/app-debug-androidTest.apk), whose manifest has an <instrumentation> element; for iOS, a zip of what xcodebuild build-for-testing writes to Build/Products.",
      });
    }
  }

  /** The version and its test package; 404 app_not_found / app_version_not_found / test_package_not_found. */
  async get(organizationId: string, packageName: string, version: string) {
    const target = await this.options.versions.get(organizationId, packageName, version);
    const record = await this.options.repo.find(target.version.id);
    if (!record) {
      throw new ApiError("test_package_not_found", {
        detail: `Version ${version} of ${packageName} has no test package.`,
        fix: remedy.uploadTestPackage(packageName, version),
      });
    }
    return { ...target, testPackage: record };
  }

  read(record: TestPackageRecord, range?: ByteRange): Promise<Readable> {
    return this.options.store.read(record.blobKey, range);
  }

  /** Its blobs, for the start-up sweep of unrecorded ones (orphaned-blobs.ts). */
  blobOwner(): BlobOwner {
    return {
      prefix: KEY_PREFIX,
      what: "test package",
      isReferenced: (key) => this.options.repo.isReferenced(key),
    };
  }
}

/**
 * A test package must test the app it is uploaded for: an APK's <instrumentation android:targetPackage>, an
 * XCUITest bundle's UI target apps (unit test targets drive no app and are not compared).
 */
function checkTargetsApp(content: TestPackageContent, app: AppRecord, version: VersionRecord): void {
  if (content.format === "apk") {
    const test = content.test;
    if (test.target_package !== app.packageName) {
      throw new ApiError("test_package_mismatch", {
        detail: `This test APK (${test.package_name}) instruments ${test.target_package}, but it was uploaded for ${app.packageName} ${version.version}.`,
        fix: `Upload the test APK built with ${app.packageName} (its <instrumentation android:targetPackage> must be ${app.packageName}), or upload this one to a version of ${test.target_package}.`,
        extra: { package_name: app.packageName, target_package: test.target_package },
      });
    }
    return;
  }
  const other = content.test.test_targets.find(
    (target) => target.ui_target_app !== null && target.ui_target_app !== app.packageName,
  );
  if (other?.ui_target_app) {
    throw new ApiError("test_package_mismatch", {
      detail: `Test target ${other.name} of this XCUITest bundle drives the app ${other.ui_target_app}, but it was uploaded for ${app.packageName} ${version.version}.`,
      fix: `Upload the build-for-testing output of the scheme that tests ${app.packageName} (its UI test targets' target application must have the bundle ID ${app.packageName}), or upload this one to a version of ${other.ui_target_app}.`,
      extra: { package_name: app.packageName, target_package: other.ui_target_app },
    });
  }
}
