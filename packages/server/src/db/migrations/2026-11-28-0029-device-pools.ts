import type { Kysely } from "kysely";

/**
 * Device pools (API.md §13, issue 28). A plan's device entry chooses devices by more than platform, model and
 * OS version, and device runs keep those selectors beside their other requirements, so that a claim stays one
 * query over device_runs (features/device-runs/device-selectors.ts, claim-query.ts):
 * - `required_api_level_min`/`_max` (Android API levels), `required_os_version_min`/`_max` (as version keys,
 *   device-selectors.ts `versionKey`: digits that sort as the versions do, on both databases), `required_abi`,
 *   `required_emulator` (1 or 0; null: either);
 * - `required_models` and `required_labels`: how many models (any of) and labels (all of) the entry names, 0
 *   for none, the values themselves in `device_run_selector_values`, one row each (`model` Pixel 7,
 *   `label` gpu=host), which the claim looks up by run: a set compared without JSON functions, which the two
 *   databases spell differently.
 * And what a device run says of itself: `shards_planned` (JSON {count, reason}, `shards: "auto"`), and
 * `setup_ms`, how long the agent took to make its device clean before it.
 * Every run stored before it asks for none of these: nulls and zeros, in place on both databases.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const columns: Array<[string, "integer" | "text"]> = [
    ["required_api_level_min", "integer"],
    ["required_api_level_max", "integer"],
    ["required_os_version_min", "text"],
    ["required_os_version_max", "text"],
    ["required_abi", "text"],
    ["required_emulator", "integer"],
    ["shards_planned", "text"],
    ["setup_ms", "integer"],
  ];
  for (const [name, type] of columns) {
    await db.schema.alterTable("device_runs").addColumn(name, type).execute();
  }
  for (const name of ["required_models", "required_labels"]) {
    await db.schema
      .alterTable("device_runs")
      .addColumn(name, "integer", (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .createTable("device_run_selector_values")
    .addColumn("device_run_id", "text", (c) => c.notNull().references("device_runs.id"))
    // model or label
    .addColumn("selector", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    // The claim's lookup: one run's values of one selector.
    .addPrimaryKeyConstraint("device_run_selector_values_pk", ["device_run_id", "selector", "value"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("device_run_selector_values").execute();
  for (const name of [
    "required_labels",
    "required_models",
    "setup_ms",
    "shards_planned",
    "required_emulator",
    "required_abi",
    "required_os_version_max",
    "required_os_version_min",
    "required_api_level_max",
    "required_api_level_min",
  ]) {
    await db.schema.alterTable("device_runs").dropColumn(name).execute();
  }
}
