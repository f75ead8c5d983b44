import type { Kysely } from "kysely";

const columns = ["ci_provider", "ci_branch", "ci_commit", "ci_pull_request", "ci_build_url"] as const;

/**
 * Where a run came from in the caller's CI (API.md §6), kept per execution. `GET /executions?branch=&commit=`
 * pages newest first, so each filter's index ends in the keyset (created_at, id), as in 0005: a page of one
 * branch's runs is an index range scan however many runs other branches have. Both together (API.md's own
 * example) get their own index rather than checking the branch row by row on the commit's runs.
 */
const indexes = [
  ["executions_org_ci_branch_idx", ["organization_id", "ci_branch", "created_at", "id"]],
  ["executions_org_ci_commit_idx", ["organization_id", "ci_commit", "created_at", "id"]],
  ["executions_org_ci_commit_branch_idx", ["organization_id", "ci_commit", "ci_branch", "created_at", "id"]],
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of columns) {
    await db.schema.alterTable("executions").addColumn(column, "text").execute();
  }
  for (const [name, indexed] of indexes) {
    await db.schema
      .createIndex(name)
      .on("executions")
      .columns([...indexed])
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of indexes) await db.schema.dropIndex(name).execute();
  for (const column of [...columns].reverse()) {
    await db.schema.alterTable("executions").dropColumn(column).execute();
  }
}
