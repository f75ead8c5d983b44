import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { Platform } from "../../db/schema.ts";
import { ApiError, remedy } from "../../errors.ts";
import { decodeCursor, toPage } from "../../http/pagination.ts";
import { newId } from "../../ids.ts";
import type { AppRecord, AppsRepo, AppWithVersions, VersionsSummary } from "./apps.repo.ts";

const noVersions: VersionsSummary = { count: 0, latest: null };

/** The app object of API.md §4, with what the apps list shows of its versions (a new app has none). */
export function appView(app: AppRecord & { versions?: VersionsSummary }) {
  const versions = app.versions ?? noVersions;
  return {
    package_name: app.packageName,
    platform: app.platform,
    display_name: app.displayName,
    created_at: app.createdAt,
    version_count: versions.count,
    latest_version: versions.latest && {
      version: versions.latest.version,
      created_at: versions.latest.createdAt,
    },
  };
}

/** Apps of one organization. Another organization's app is indistinguishable from one that does not exist. */
export class AppsService {
  constructor(
    private readonly repo: AppsRepo,
    private readonly clock: Clock,
  ) {}

  async create(
    organizationId: string,
    input: { package_name: string; platform: Platform; display_name?: string },
  ) {
    const now = this.clock.now();
    const app: AppRecord = {
      id: newId("app", now),
      organizationId,
      packageName: input.package_name,
      platform: input.platform,
      displayName: input.display_name ?? null,
      createdAt: isoTime(now),
    };
    if (!(await this.repo.insert(app))) {
      throw new ApiError("app_exists", {
        detail: `App ${input.package_name} is registered already.`,
        fix: `Use it as it is: upload versions with PUT /v1/apps/${input.package_name}/versions/V, or testbay upload --app ${input.package_name} --version V --file PATH.`,
      });
    }
    return app;
  }

  /**
   * The app with exactly this package name, or 404 `app_not_found`: reason `case_mismatch` with
   * `did_you_mean` when only the case differs (within the organization), `unknown` otherwise.
   */
  async get(organizationId: string, packageName: string): Promise<AppRecord> {
    const app = await this.repo.findExact(organizationId, packageName);
    if (app) return app;
    const near = await this.repo.findFolded(organizationId, packageName);
    const suggestion = near[0];
    if (suggestion) {
      throw new ApiError("app_not_found", {
        reason: "case_mismatch",
        detail: `No app is registered as ${packageName}, but ${suggestion.packageName} is.`,
        fix: `Package names are case-sensitive: use ${suggestion.packageName}.`,
        extra: { did_you_mean: suggestion.packageName },
      });
    }
    throw new ApiError("app_not_found", {
      reason: "unknown",
      detail: `No app is registered as ${packageName}.`,
      fix: remedy.registerApp(packageName),
    });
  }

  /** As `get`, with the app's versions summarized: for GET /v1/apps/{package_name}. */
  async getWithVersions(organizationId: string, packageName: string): Promise<AppWithVersions> {
    const app = await this.repo.findExactWithVersions(organizationId, packageName);
    if (app) return app;
    // `get` says why it is not there (case_mismatch or unknown); one registered in between has no versions yet.
    return { ...(await this.get(organizationId, packageName)), versions: noVersions };
  }

  async list(organizationId: string, query: { limit?: number; cursor?: string }) {
    const limit = query.limit ?? 50;
    const rows = await this.repo.list(organizationId, limit, decodeCursor(query.cursor));
    return toPage(rows, limit, appView);
  }
}
