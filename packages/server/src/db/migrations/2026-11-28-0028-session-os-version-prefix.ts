import type { Kysely } from "kysely";

/**
 * A WebDriver session's `appium:platformVersion` is the start of the device's OS version (API.md §12), where a
 * plan's `os_version` is the device's exactly (API.md §5): device runs keep it apart, in
 * `required_os_version_prefix`, written as their other requirements are (features/device-runs/enqueue-query.ts)
 * and matched by the claim as a prefix (features/device-runs/os-version-prefix.ts). Null for every run before
 * it: a session queued before it keeps the exact match it was queued with, for the queue timeout it has left.
 * A column both databases add and drop in place.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("device_runs").addColumn("required_os_version_prefix", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("device_runs").dropColumn("required_os_version_prefix").execute();
}
