import { type Kysely, sql } from "kysely";
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

/** What an insert found: written, the name taken already, or the version holding its most files. */
export type InsertOutcome = "inserted" | "exists" | "limit";

export class VersionFilesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The commit point of an upload: the row is written only while the name is free and the version holds fewer
   * than `maxFiles`, both decided by the one statement (the primary key settles two uploads of one name).
   */
  async insert(record: VersionFileRecord, maxFiles: number): Promise<InsertOutcome> {
    // Typed by casts: PostgreSQL reads an insert's select list on its own, not by the target's columns.
    const result =
      await sql`insert into version_files (app_version_id, name, size_bytes, sha256, blob_key, created_at)
      select cast(${record.appVersionId} as text), cast(${record.name} as text), cast(${record.sizeBytes} as bigint),
        cast(${record.sha256} as text), cast(${record.blobKey} as text), cast(${record.createdAt} as text)
      where (select count(*) from version_files where app_version_id = ${record.appVersionId}) < ${maxFiles}
      on conflict (app_version_id, name) do nothing`.execute(this.db);
    if (Number(result.numAffectedRows ?? 0) > 0) return "inserted";
    return (await this.find(record.appVersionId, record.name)) ? "exists" : "limit";
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
