import type { AppRecord } from "../../apps/index.ts";
import type { VersionRecord } from "../versions.repo.ts";
import type { TestPackageRecord } from "./test-packages.repo.ts";

/** The test package object of API.md §4b. */
export function testPackageView(app: AppRecord, version: VersionRecord, record: TestPackageRecord) {
  return {
    package_name: app.packageName,
    version: version.version,
    format: record.format,
    size_bytes: record.sizeBytes,
    sha256: record.sha256,
    created_at: record.createdAt,
    test: record.test,
  };
}
