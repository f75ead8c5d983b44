import type { Kysely } from "kysely";
import { olderThan } from "../../db/keyset.ts";
import type { Database } from "../../db/schema.ts";
import type { Position } from "../../http/pagination.ts";
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

export class VersionsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Records a stored version: the commit point of an upload. False when the version exists already, which
   * is how exactly one of several concurrent uploads of one version wins.
   */
  async insert(version: VersionRecord): Promise<boolean> {
    const result = await this.db
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
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async exists(appId: string, version: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("app_versions")
      .select("id")
      .where("app_id", "=", appId)
      .where("version", "=", version)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Newest first; `limit + 1` rows so the caller can tell whether there is a next page. */
  async list(appId: string, limit: number, after: Position | undefined): Promise<VersionRecord[]> {
    let query = this.db.selectFrom("app_versions").selectAll().where("app_id", "=", appId);
    if (after) query = query.where(olderThan(after));
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(limit + 1)
      .execute();
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
}
