import type { Kysely } from "kysely";
import { newestFirstPage } from "../../db/keyset.ts";
import type { Database } from "../../db/schema.ts";
import type { Position } from "../../http/pagination.ts";
import { append } from "../events/index.ts";
import type { BinaryMetadata } from "./inspection/index.ts";

export interface VersionRecord {
  id: string;
  appId: string;
  version: string;
  sizeBytes: number;
  sha256: string;
  blobKey: string;
  binary: BinaryMetadata;
  createdAt: string;
}

type VersionRow = Database["app_versions"];

function toRecord(row: VersionRow): VersionRecord {
  return {
    id: row.id,
    appId: row.app_id,
    version: row.version,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    blobKey: row.blob_key,
    binary: JSON.parse(row.binary) as BinaryMetadata,
    createdAt: row.created_at,
  };
}

/** The outcome of deleting a version: done (with the blobs to remove now), or refused while runs use it. */
export type DeleteOutcome =
  | { deleted: true; blobKeys: string[] }
  | { deleted: false; activeExecutionIds: string[] };

/** A version old enough for retention to delete, with what is needed to delete it. */
export interface RetentionCandidate {
  organizationId: string;
  packageName: string;
  version: VersionRecord;
}

export class VersionsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Records a stored version: the commit point of an upload. False when the version exists already, which
   * is how exactly one of several concurrent uploads of one version wins. The winner's version.uploaded
   * event (`announced`: its organization and data, the version object) is appended in the same transaction.
   */
  async insert(
    version: VersionRecord,
    announced: { organizationId: string; data: Record<string, unknown> },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const inserted = await this.insertRow(trx, version);
      if (inserted) {
        await append(trx, {
          organizationId: announced.organizationId,
          type: "version.uploaded",
          subjectId: version.id,
          data: announced.data,
          at: version.createdAt,
        });
      }
      return inserted;
    });
  }

  private async insertRow(db: Kysely<Database>, version: VersionRecord): Promise<boolean> {
    const result = await db
      .insertInto("app_versions")
      .values({
        id: version.id,
        app_id: version.appId,
        version: version.version,
        size_bytes: version.sizeBytes,
        sha256: version.sha256,
        blob_key: version.blobKey,
        binary: JSON.stringify(version.binary),
        created_at: version.createdAt,
      })
      .onConflict((oc) => oc.columns(["app_id", "version"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async find(appId: string, version: string): Promise<VersionRecord | undefined> {
    const row = await this.db
      .selectFrom("app_versions")
      .selectAll()
      .where("app_id", "=", appId)
      .where("version", "=", version)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async exists(appId: string, version: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("app_versions")
      .select("id")
      .where("app_id", "=", appId)
      .where("version", "=", version)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Newest first; `limit + 1` rows so the caller can tell whether there is a next page. */
  async list(appId: string, limit: number, after: Position | undefined): Promise<VersionRecord[]> {
    const query = this.db
      .selectFrom("app_versions")
      .selectAll()
      .where("app_id", "=", appId)
      .where("deleted_at", "is", null);
    const rows = await newestFirstPage(query, limit, after).execute();
    return rows.map(toRecord);
  }

  async isReferenced(blobKey: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("app_versions")
      .select("id")
      .where("blob_key", "=", blobKey)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Deletes a version unless an execution of it is queued or running; the check and the deletion are one
   * transaction. The row stays, marked deleted, because executions keep referring to it (a foreign key):
   * its name is changed to one no client can send (`~` is not allowed in versions), so the same version can
   * be uploaded again, and its blob key to one that names no object, so the start-up sweep removes the
   * binary should deleting it below fail. The version's test package and version files rows go. Returns the blob keys to
   * delete once committed.
   */
  async markDeleted(
    organizationId: string,
    packageName: string,
    version: VersionRecord,
    at: string,
  ): Promise<DeleteOutcome> {
    return this.db.transaction().execute(async (trx): Promise<DeleteOutcome> => {
      const active = await trx
        .selectFrom("executions")
        .select("id")
        // (organization, package, version) leads an index; the version ID tells this upload from an
        // earlier, deleted one of the same name.
        .where("organization_id", "=", organizationId)
        .where("package_name", "=", packageName)
        .where("version", "=", version.version)
        .where("app_version_id", "=", version.id)
        .where("status", "in", ["queued", "running"])
        .orderBy("id")
        .limit(10)
        .execute();
      if (active.length > 0) return { deleted: false, activeExecutionIds: active.map((row) => row.id) };
      const marked = await trx
        .updateTable("app_versions")
        .set({
          deleted_at: at,
          version: `${version.version}~deleted~${version.id}`,
          blob_key: `deleted/${version.id}`,
        })
        .where("id", "=", version.id)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      // Deleted meanwhile by another request or instance: that one removes the blobs.
      if (Number(marked.numUpdatedRows) === 0) return { deleted: true, blobKeys: [] };
      const testPackage = await trx
        .deleteFrom("test_packages")
        .where("app_version_id", "=", version.id)
        .returning("blob_key")
        .executeTakeFirst();
      const files = await trx
        .deleteFrom("version_files")
        .where("app_version_id", "=", version.id)
        .returning("blob_key")
        .execute();
      return {
        deleted: true,
        blobKeys: [
          version.blobKey,
          ...(testPackage ? [testPackage.blob_key] : []),
          ...files.map((file) => file.blob_key),
        ],
      };
    });
  }

  /**
   * Versions past the newest `keep` of their app (by upload time), oldest first, at most `limit`. Apps with
   * no more than `keep` versions cost one grouped count, not a scan of their versions.
   */
  async beyondNewest(keep: number, limit: number): Promise<RetentionCandidate[]> {
    const crowded = await this.db
      .selectFrom("app_versions")
      .innerJoin("apps", "apps.id", "app_versions.app_id")
      .select(["apps.id", "apps.organization_id", "apps.package_name"])
      .where("app_versions.deleted_at", "is", null)
      .groupBy(["apps.id", "apps.organization_id", "apps.package_name"])
      .having((eb) => eb.fn.countAll(), ">", keep)
      .execute();
    const candidates: RetentionCandidate[] = [];
    for (const app of crowded) {
      if (candidates.length >= limit) break;
      const rows = await this.db
        .selectFrom("app_versions")
        .selectAll()
        .where("app_id", "=", app.id)
        .where("deleted_at", "is", null)
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .offset(keep)
        .limit(limit - candidates.length)
        .execute();
      for (const row of rows.reverse()) {
        candidates.push({
          organizationId: app.organization_id,
          packageName: app.package_name,
          version: toRecord(row),
        });
      }
    }
    return candidates;
  }
}
