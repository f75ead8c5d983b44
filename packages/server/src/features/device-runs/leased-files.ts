/**
 * The binary and the test package of the version a lease's run tests, by the lease: what an `--all-orgs`
 * agent (API.md §15) downloads for a run of another organization than its client's, whose app it cannot
 * name (GET /v1/apps/… reads the client's own organization). Only the holder of a running lease knows it.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";

export interface LeasedFile {
  blobKey: string;
  sha256: string;
  sizeBytes: number;
  /** The name a download is saved under. */
  fileName: string;
}

export async function leasedFiles(
  db: Kysely<Database>,
  leaseId: string,
): Promise<{ binary: LeasedFile | null; testPackage: LeasedFile | null } | undefined> {
  const row = await db
    .selectFrom("device_runs as dr")
    .innerJoin("executions as e", "e.id", "dr.execution_id")
    .leftJoin("app_versions as v", "v.id", "e.app_version_id")
    .leftJoin("test_packages as tp", "tp.app_version_id", "e.app_version_id")
    .select([
      "e.package_name",
      "e.version",
      "v.blob_key as binary_key",
      "v.sha256 as binary_sha256",
      "v.size_bytes as binary_size",
      "v.binary as binary_metadata",
      "tp.blob_key as test_key",
      "tp.sha256 as test_sha256",
      "tp.size_bytes as test_size",
    ])
    .where("dr.lease_id", "=", leaseId)
    .where("dr.status", "=", "running")
    .executeTakeFirst();
  if (!row) return undefined;
  const name = `${row.package_name}-${row.version}`;
  const format = row.binary_metadata
    ? (JSON.parse(row.binary_metadata) as { format?: string }).format
    : undefined;
  return {
    binary:
      row.binary_key && row.binary_sha256 && row.binary_size !== null
        ? {
            blobKey: row.binary_key,
            sha256: row.binary_sha256,
            sizeBytes: Number(row.binary_size),
            fileName: `${name}.${format === "app" ? "zip" : (format ?? "bin")}`,
          }
        : null,
    testPackage:
      row.test_key && row.test_sha256 && row.test_size !== null
        ? {
            blobKey: row.test_key,
            sha256: row.test_sha256,
            sizeBytes: Number(row.test_size),
            fileName: `${name}-androidTest.apk`,
          }
        : null,
  };
}
