import type { Kysely } from "kysely";
import type { Database } from "../../../db/schema.ts";

/** A file uploaded beside a version for its tests (API.md §14). */
export interface VersionFileRecord {
  appVersionId: string;
  name: string;
  sizeBytes: number;
  sha256: string;
  blobKey: string;
  createdAt: string;
}

function toRecord(row: Database["version_files"]): VersionFileRecord {
  return {
    appVersionId: row.app_version_id,
    name: row.name,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    blobKey: row.blob_key,
    createdAt: row.created_at,
  };
}

/** What an insert did: wrote the row, or found the name taken already, or the version holding its most files. */
export type InsertOutcome = "inserted" | "exists" | "limit";

export class VersionFilesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The commit point of an upload: the row is written only while the name is free and the version holds fewer
   * than `maxFiles`. Concurrent uploads to one version take turns on its app_versions row (an update that
   * changes nothing still locks it on PostgreSQL, and takes SQLite's write lock), so the count they check is the
   * one they commit against; the primary key settles two uploads of one name.
   */
  async insert(record: VersionFileRecord, maxFiles: number): Promise<InsertOutcome> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable("app_versions")
        .set((eb) => ({ id: eb.ref("id") }))
        .where("id", "=", record.appVersionId)
        .execute();
      const taken = await trx
        .selectFrom("version_files")
        .select("name")
        .where("app_version_id", "=", record.appVersionId)
        .execute();
      if (taken.some((row) => row.name === record.name)) return "exists";
      if (taken.length >= maxFiles) return "limit";
      await trx
        .insertInto("version_files")
        .values({
          app_version_id: record.appVersionId,
          name: record.name,
          size_bytes: record.sizeBytes,
          sha256: record.sha256,
          blob_key: record.blobKey,
          created_at: record.createdAt,
        })
        .execute();
      return "inserted";
    });
  }

  async find(appVersionId: string, name: string): Promise<VersionFileRecord | undefined> {
    const row = await this.db
      .selectFrom("version_files")
      .selectAll()
      .where("app_version_id", "=", appVersionId)
      .where("name", "=", name)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** The version's files by name (at most the per-version limit, so never paged). */
  async list(appVersionId: string): Promise<VersionFileRecord[]> {
    const rows = await this.db
      .selectFrom("version_files")
      .selectAll()
      .where("app_version_id", "=", appVersionId)
      .orderBy("name")
      .execute();
    return rows.map(toRecord);
  }

  /** A file of the version an execution runs: what its agent may download while it holds the run's lease. */
  async findForExecution(executionId: string, name: string): Promise<VersionFileRecord | undefined> {
    const row = await this.db
      .selectFrom("version_files")
      .innerJoin("executions", "executions.app_version_id", "version_files.app_version_id")
      .selectAll("version_files")
      .where("executions.id", "=", executionId)
      .where("version_files.name", "=", name)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async isReferenced(blobKey: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("version_files")
      .select("name")
      .where("blob_key", "=", blobKey)
      .executeTakeFirst();
    return row !== undefined;
  }
}
