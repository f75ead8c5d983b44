import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema.ts";
import type { TestPackageContent } from "../inspection/index.ts";

export type { TestPackageContent } from "../inspection/index.ts";

export type TestPackageRecord = TestPackageContent & {
  appVersionId: string;
  sizeBytes: number;
  sha256: string;
  blobKey: string;
  createdAt: string;
};

function toRecord(row: Database["test_packages"]): TestPackageRecord {
  return {
    appVersionId: row.app_version_id,
    ...({ format: row.format, test: JSON.parse(row.test) } as TestPackageContent),
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    blobKey: row.blob_key,
    createdAt: row.created_at,
  };
}

export class TestPackagesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** The commit point of an upload; false when the version has one already (the loser of two uploads). */
  async insert(record: TestPackageRecord): Promise<boolean> {
    const result = await this.db
      .insertInto("test_packages")
      .values({
        app_version_id: record.appVersionId,
        format: record.format,
        size_bytes: record.sizeBytes,
        sha256: record.sha256,
        blob_key: record.blobKey,
        test: JSON.stringify(record.test),
        created_at: record.createdAt,
      })
      .onConflict((oc) => oc.column("app_version_id").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async find(appVersionId: string): Promise<TestPackageRecord | undefined> {
    const row = await this.db
      .selectFrom("test_packages")
      .selectAll()
      .where("app_version_id", "=", appVersionId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** The test packages of a page of versions, by version id: one query for a whole list. */
  async forVersions(appVersionIds: string[]): Promise<Map<string, TestPackageRecord>> {
    if (appVersionIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("test_packages")
      .selectAll()
      .where("app_version_id", "in", appVersionIds)
      .execute();
    return new Map(rows.map((row) => [row.app_version_id, toRecord(row)]));
  }

  async isReferenced(blobKey: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("test_packages")
      .select("app_version_id")
      .where("blob_key", "=", blobKey)
      .executeTakeFirst();
    return row !== undefined;
  }
}
