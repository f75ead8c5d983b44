import type { ExpressionBuilder, Kysely } from "kysely";
import { newestFirstPage } from "../../db/keyset.ts";
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

/** What the apps list and an app's page show of its versions without listing them. */
export interface VersionsSummary {
  count: number;
  latest: { version: string; createdAt: string } | null;
}

export type AppWithVersions = AppRecord & { versions: VersionsSummary };

type AppRow = Database["apps"];

/** The app's versions that exist (a deleted one stays as a row, marked), for the summary's subqueries. */
const liveVersionsOf = (eb: ExpressionBuilder<Database, "apps">) =>
  eb.selectFrom("app_versions as v").whereRef("v.app_id", "=", "apps.id").where("v.deleted_at", "is", null);

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

function latestOf(eb: ExpressionBuilder<Database, "apps">, column: "version" | "created_at") {
  return liveVersionsOf(eb)
    .select(`v.${column}`)
    .orderBy("v.created_at", "desc")
    .orderBy("v.id", "desc")
    .limit(1);
}

function withSummary(
  row: AppRow & {
    version_count: number | string | bigint | null;
    latest_version: string | null;
    latest_version_at: string | null;
  },
): AppWithVersions {
  const latest =
    row.latest_version !== null && row.latest_version_at !== null
      ? { version: row.latest_version, createdAt: row.latest_version_at }
      : null;
  // PostgreSQL's count is a bigint, which node-postgres hands over as a string.
  return { ...toRecord(row), versions: { count: Number(row.version_count ?? 0), latest } };
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

  /**
   * Newest first, each with its number of versions and its latest one; `limit + 1` rows so the caller can
   * tell whether there is a next page. The summary is three subqueries per app on app_versions' (app_id,
   * created_at, id) index, so a page costs the same however many versions its apps have.
   */
  async list(organizationId: string, limit: number, after: Position | undefined): Promise<AppWithVersions[]> {
    const query = this.withVersions().where("organization_id", "=", organizationId);
    const rows = await newestFirstPage(query, limit, after, "apps").execute();
    return rows.map(withSummary);
  }

  /** The app with this exact package name and its versions' summary. */
  async findExactWithVersions(
    organizationId: string,
    packageName: string,
  ): Promise<AppWithVersions | undefined> {
    const row = await this.withVersions()
      .where("organization_id", "=", organizationId)
      .where("package_name", "=", packageName)
      .executeTakeFirst();
    return row && withSummary(row);
  }

  private withVersions() {
    return this.db
      .selectFrom("apps")
      .selectAll("apps")
      .select((eb) => [
        liveVersionsOf(eb)
          .select((inner) => inner.fn.countAll<number | string | bigint>().as("n"))
          .as("version_count"),
        latestOf(eb, "version").as("latest_version"),
        latestOf(eb, "created_at").as("latest_version_at"),
      ]);
  }
}
