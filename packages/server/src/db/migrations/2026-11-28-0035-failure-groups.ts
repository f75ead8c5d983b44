import { type Kysely, sql } from "kysely";

/**
 * Failure groups kept as rows (API.md §16): per organization, plan and signature, the count of failed cases and
 * the first and last occurrence, written by features/failures/failure-groups.writer.ts in the statement after
 * each insert of test cases with failures. GET /failures reads these rows rather than aggregating the failed
 * cases (test_cases_failure_signature_idx, migration 0033), which over a million cases took longer than the
 * 200 ms the API allows. A purged plan takes its groups with it, as its executions leave every group when their
 * plan is gone.
 *
 * The rows of the failures stored before this migration are made here from those cases, in the aggregate the
 * reads used to run, once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("failure_groups")
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("test_plan_id", "text", (c) => c.notNull().references("test_plans.id").onDelete("cascade"))
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("package_name", "text")
    .addColumn("occurrences", "integer", (c) => c.notNull())
    // The tests it failed in, a sorted JSON array of test ids: what the list counts and the fixed check reads.
    .addColumn("test_ids", "text", (c) => c.notNull())
    .addColumn("first_at", "text", (c) => c.notNull())
    .addColumn("first_execution_id", "text", (c) => c.notNull())
    .addColumn("last_at", "text", (c) => c.notNull())
    .addColumn("last_execution_id", "text", (c) => c.notNull())
    .addColumn("last_device_run_id", "text", (c) => c.notNull())
    .addColumn("last_attempt", "integer", (c) => c.notNull())
    .addColumn("last_seq", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("failure_groups_pk", ["organization_id", "test_plan_id", "signature"])
    .execute();
  // The list reads an organization's groups newest first.
  await db.schema
    .createIndex("failure_groups_org_last_idx")
    .on("failure_groups")
    .columns(["organization_id", "last_at"])
    .execute();

  // The groups of the cases already stored: first and last picked as the smallest and largest "time id …" text
  // (fixed-width ISO times; attempt and seq offset to a fixed width), split again below.
  const padding = 1_000_000_000;
  const rows = await sql<{
    organization_id: string;
    test_plan_id: string;
    signature: string;
    package_name: string | null;
    occurrences: number | string;
    first: string;
    last: string;
  }>`select e.organization_id, e.test_plan_id, tc.failure_signature as signature, max(e.package_name) as package_name,
      count(*) as occurrences, min(e.created_at || ' ' || e.id) as first,
      max(e.created_at || ' ' || e.id || ' ' || tc.device_run_id || ' ' || (tc.attempt + ${sql.lit(padding)}) || ' ' || (tc.seq + ${sql.lit(padding)})) as last
    from test_cases tc
    join device_runs dr on dr.id = tc.device_run_id
    join executions e on e.id = dr.execution_id
    where tc.failure_signature is not null and e.test_plan_id is not null
    group by e.organization_id, e.test_plan_id, tc.failure_signature`.execute(db);
  const tests = await sql<{
    organization_id: string;
    test_plan_id: string;
    signature: string;
    test_id: string;
  }>`
    select distinct e.organization_id, e.test_plan_id, tc.failure_signature as signature, tc.test_id
    from test_cases tc
    join device_runs dr on dr.id = tc.device_run_id
    join executions e on e.id = dr.execution_id
    where tc.failure_signature is not null and e.test_plan_id is not null and tc.test_id is not null`.execute(
    db,
  );
  const testsOf = new Map<string, string[]>();
  for (const row of tests.rows) {
    const key = `${row.organization_id} ${row.test_plan_id} ${row.signature}`;
    testsOf.set(key, [...(testsOf.get(key) ?? []), row.test_id]);
  }
  const groups = rows.rows.map((row) => {
    const [firstAt, firstExecutionId] = row.first.split(" ");
    const [lastAt, lastExecutionId, lastDeviceRunId, attempt, seq] = row.last.split(" ");
    return {
      organization_id: row.organization_id,
      test_plan_id: row.test_plan_id,
      signature: row.signature,
      package_name: row.package_name,
      occurrences: Number(row.occurrences),
      test_ids: JSON.stringify(
        (testsOf.get(`${row.organization_id} ${row.test_plan_id} ${row.signature}`) ?? []).sort(),
      ),
      first_at: firstAt,
      first_execution_id: firstExecutionId,
      last_at: lastAt,
      last_execution_id: lastExecutionId,
      last_device_run_id: lastDeviceRunId,
      last_attempt: Number(attempt) - padding,
      last_seq: Number(seq) - padding,
    };
  });
  // 13 values a row: far below SQLite's and PostgreSQL's bound-parameter limits.
  for (let i = 0; i < groups.length; i += 500) {
    await db
      .insertInto("failure_groups")
      .values(groups.slice(i, i + 500))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("failure_groups").execute();
}
