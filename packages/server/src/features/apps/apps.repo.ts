import type { Kysely } from "kysely";
import { olderThan } from "../../db/keyset.ts";
import type { Database, Platform } from "../../db/schema.ts";
import type { Position } from "../../http/pagination.ts";

export interface AppRecord {
  id: string;
  organizationId: string;
  packageName: string;
  platform: Platform;
  displayName: string | null;
  createdAt: string;
}

type AppRow = Database["apps"];

function toRecord(row: AppRow): AppRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    packageName: row.package_name,
    platform: row.platform,
    displayName: row.display_name,
    createdAt: row.created_at,
  };
}

export class AppsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the app; false when the organization has one with that package name already. */
  async insert(app: AppRecord): Promise<boolean> {
    const result = await this.db
      .insertInto("apps")
      .values({
        id: app.id,
        organization_id: app.organizationId,
        package_name: app.packageName,
        package_name_folded: app.packageName.toLowerCase(),
        platform: app.platform,
        display_name: app.displayName,
        created_at: app.createdAt,
      })
      .onConflict((oc) => oc.columns(["organization_id", "package_name"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async findExact(organizationId: string, packageName: string): Promise<AppRecord | undefined> {
    const row = await this.db
      .selectFrom("apps")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("package_name", "=", packageName)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Apps of the organization whose name differs only in case. */
  async findFolded(organizationId: string, packageName: string): Promise<AppRecord[]> {
    const rows = await this.db
      .selectFrom("apps")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("package_name_folded", "=", packageName.toLowerCase())
      .orderBy("package_name")
      .limit(5)
      .execute();
    return rows.map(toRecord);
  }

  /** Newest first; `limit + 1` rows so the caller can tell whether there is a next page. */
  async list(organizationId: string, limit: number, after: Position | undefined): Promise<AppRecord[]> {
    let query = this.db.selectFrom("apps").selectAll().where("organization_id", "=", organizationId);
    if (after) query = query.where(olderThan(after));
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(limit + 1)
      .execute();
    return rows.map(toRecord);
  }
}
