import { createHash } from "node:crypto";
import { type Kysely, sql } from "kysely";

/**
 * Quarantine of known-flaky tests (API.md §6, issue 15): a quarantined test still runs and is reported, but its
 * failure does not fail the execution.
 *
 * Test cases get the test's id within its plan (`test_id`, what GET /v1/tests and GET /executions/{id}/tests
 * call it), so that a quarantine, a history and an execution's outcome can find a test's cases by an index
 * instead of hashing every case's names again. Existing cases are backfilled here; new ones get it when stored.
 * `test_quarantines` holds who quarantined which test of the organization, and why.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("test_cases").addColumn("test_id", "text").execute();
  await backfillTestIds(db);
  // A quarantine looks up whether its test was ever reported (PUT /tests/{id}/quarantine), and an execution's
  // outcome joins its cases to the quarantines by test id.
  await db.schema.createIndex("test_cases_test_id_idx").on("test_cases").column("test_id").execute();

  await db.schema
    .createTable("test_quarantines")
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("test_id", "text", (c) => c.notNull())
    .addColumn("test_plan_id", "text", (c) => c.notNull())
    .addColumn("classname", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    // The actor as the audit log names it: a person's email or a client's ID.
    .addColumn("quarantined_by", "text", (c) => c.notNull())
    .addColumn("quarantined_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("test_quarantines_pk", ["organization_id", "test_id"])
    .execute();
  // A plan's quarantined tests: GET /v1/tests, an execution's tests and its outcome read them by plan.
  await db.schema
    .createIndex("test_quarantines_plan_idx")
    .on("test_quarantines")
    .columns(["organization_id", "test_plan_id"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("test_quarantines").execute();
  await db.schema.dropIndex("test_cases_test_id_idx").execute();
  await db.schema.alterTable("test_cases").dropColumn("test_id").execute();
}

/**
 * The same hash as testId() in features/tests/test-id.ts, copied so that this migration keeps
 * computing what it computed when it was written (its test checks that both agree).
 */
function testId(testPlanId: string, classname: string, name: string): string {
  const digest = createHash("sha256").update(`${testPlanId}\u0000${classname}\u0000${name}`).digest("hex");
  return `t_${digest.slice(0, 24)}`;
}

/** Rows per insert: 4 values each, far below SQLite's 32,766 bound values per statement. */
const chunkSize = 500;

/**
 * Neither dialect can compute the id (SQLite has no SHA-256), so it is computed here: plan by plan, the
 * plan's distinct tests are read (a plan's tests fit in memory; all plans' together might not), their ids
 * written to a scratch table in chunks, and then one UPDATE joins every case to its id. One UPDATE rather than
 * one per test or per case: the statements' count does not grow with the table.
 *
 * The scratch table has no index: its names may together exceed what a PostgreSQL B-tree entry holds (two
 * 500-character names of 4-byte characters), and both databases build what the join needs on their own (a
 * hash join on PostgreSQL, an automatic index on SQLite).
 */
async function backfillTestIds(db: Kysely<any>): Promise<void> {
  const plans = await db
    .selectFrom("executions")
    .select(["organization_id", "test_plan_id"])
    .distinct()
    .execute();
  if (plans.length === 0) return;
  await db.schema
    .createTable("test_id_backfill")
    .addColumn("test_plan_id", "text", (c) => c.notNull())
    .addColumn("classname", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("test_id", "text", (c) => c.notNull())
    .execute();
  for (const plan of plans) {
    const tests = await db
      .selectFrom("test_cases")
      .innerJoin("device_runs", "device_runs.id", "test_cases.device_run_id")
      .innerJoin("executions", "executions.id", "device_runs.execution_id")
      .select(["test_cases.classname", "test_cases.name"])
      .distinct()
      .where("executions.organization_id", "=", plan.organization_id)
      .where("executions.test_plan_id", "=", plan.test_plan_id)
      .execute();
    for (let i = 0; i < tests.length; i += chunkSize) {
      await db
        .insertInto("test_id_backfill")
        .values(
          tests.slice(i, i + chunkSize).map((test) => ({
            test_plan_id: plan.test_plan_id,
            classname: test.classname,
            name: test.name,
            test_id: testId(plan.test_plan_id, test.classname, test.name),
          })),
        )
        .execute();
    }
  }
  await sql`
    update test_cases set test_id = test_id_backfill.test_id
    from device_runs, executions, test_id_backfill
    where device_runs.id = test_cases.device_run_id
      and executions.id = device_runs.execution_id
      and test_id_backfill.test_plan_id = executions.test_plan_id
      and test_id_backfill.classname = test_cases.classname
      and test_id_backfill.name = test_cases.name
  `.execute(db);
  await db.schema.dropTable("test_id_backfill").execute();
}
