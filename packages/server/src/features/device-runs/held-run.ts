/**
 * Reading the run a lease holds, with what ending its attempt needs, in one statement: the run, its
 * execution's cancel flag and status, and every test case its agents reported in this run (all attempts, in
 * the order reported) for test-summary.ts. Inside a transaction on PostgreSQL it can lock the run and its
 * execution (`lock`); outside one it returns the execution row's version (xmin) instead, for an end-of-attempt
 * that writes only if the execution did not change meanwhile (end-attempt-query.ts).
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";
import type { Database, ExecutionStatus, TestCaseStatus } from "../../db/schema.ts";
import type { FailureContext } from "../failures/failure-groups.writer.ts";
import type { TestReport } from "./test-summary.ts";
import type { AgentDevice, LeasedRun } from "./types.ts";

export interface HeldRun extends LeasedRun {
  /** What its failed test cases are grouped with (features/failures/failure-groups.writer.ts). */
  failureContext: FailureContext;
  executionStatus: ExecutionStatus;
  /** PostgreSQL: the execution row's version as read (xmin); undefined on SQLite. */
  executionVersion: string | undefined;
  reports: TestReport[];
  /** Which shard of its device entry the run is (0-based), and of how many (1: not sharded). */
  shard: number;
  shardCount: number;
  /**
   * A WebDriver session's run (read with the reports, to end the attempt): what its client said of it
   * (POST /v1/executions/{id}/result), null when it said nothing. Undefined for a test plan's run.
   */
  session?: { result: "passed" | "failed" | null };
}

type HeldRow = {
  device_run_id: string;
  execution_id: string;
  organization_id: string | null;
  position: number;
  shard: number;
  shard_count: number;
  attempt: number;
  max_attempts: number | null;
  lease_id: string | null;
  lease_expires_at: string | null;
  claimed_device: string | null;
  /** Null for a WebDriver session (no plan, migration 0026). */
  test_plan_id: string | null;
  cancel_requested: number;
  execution_status: ExecutionStatus;
  execution_version?: string;
  reports?: unknown;
  kind?: string;
  session_result?: string | null;
  package_name: string | null;
  execution_created_at: string;
  test_package: string | null;
};

export interface HeldQuery {
  /** Which run: by its lease (and organization), or a lapsed lease (by lease_expires_at before `lapsedBefore`). */
  leaseId: string;
  organizationId?: string;
  lapsedBefore?: string;
  /** Read the run's test case reports (to end the attempt). */
  withReports?: boolean;
  /** PostgreSQL, inside a transaction: lock the run and its execution until it ends. */
  lock?: boolean;
}

/**
 * Whether a reported test is quarantined in the run's organization as the attempt ends (1 or 0): one probe of
 * test_quarantines' primary key per case. A quarantined test's failure does not fail its run (API.md §6).
 */
const quarantined = sql`case when exists (select 1 from test_quarantines q
  where q.organization_id = dr.organization_id and q.test_id = tc.test_id) then 1 else 0 end`;

/** A session's result as its client set it (features/sessions keeps it in webdriver_sessions, migration 0026). */
const sessionResult = sql`(select ws.result_status from webdriver_sessions ws where ws.execution_id = dr.execution_id)`;

export async function readHeld(
  db: Kysely<Database>,
  dialect: Dialect,
  query: HeldQuery,
): Promise<HeldRun | undefined> {
  const reports: RawBuilder<unknown> =
    dialect === "postgres"
      ? sql`(select json_agg(json_build_array(tc.classname, tc.name, tc.attempt, tc.status, ${quarantined}) order by tc.attempt, tc.seq)
          from test_cases tc where tc.device_run_id = dr.id and tc.attempt <= dr.attempt)`
      : sql`(select json_group_array(json_array(tc.classname, tc.name, tc.attempt, tc.status, ${quarantined}) order by tc.attempt, tc.seq)
          from test_cases tc where tc.device_run_id = dr.id and tc.attempt <= dr.attempt)`;
  const conditions = [
    sql`dr.lease_id = ${query.leaseId}`,
    sql`dr.status = 'running'`,
    ...(query.organizationId === undefined ? [] : [sql`dr.organization_id = ${query.organizationId}`]),
    ...(query.lapsedBefore === undefined ? [] : [sql`dr.lease_expires_at < ${query.lapsedBefore}`]),
  ];
  const result = await sql<HeldRow>`select dr.id as device_run_id, dr.execution_id, dr.organization_id,
      dr.position, dr.shard, dr.shard_count, dr.attempt, dr.max_attempts, dr.lease_id, dr.lease_expires_at, dr.claimed_device,
      e.test_plan_id, e.cancel_requested, e.status as execution_status, e.package_name, e.created_at as execution_created_at,
      (select tp.test from test_packages tp where tp.app_version_id = e.app_version_id) as test_package
      ${dialect === "postgres" ? sql`, cast(e.xmin as text) as execution_version` : sql``}
      ${query.withReports ? sql`, ${reports} as reports, e.kind, ${sessionResult} as session_result` : sql``}
    from device_runs dr join executions e on e.id = dr.execution_id
    where ${sql.join(conditions, sql` and `)}
    ${query.lock && dialect === "postgres" ? sql`for update of dr, e` : sql``}`.execute(db);
  const row = result.rows[0];
  if (!row || row.lease_id === null || row.lease_expires_at === null || row.organization_id === null) {
    return undefined;
  }
  return {
    leaseId: row.lease_id,
    leaseExpiresAt: row.lease_expires_at,
    deviceRunId: row.device_run_id,
    executionId: row.execution_id,
    organizationId: row.organization_id,
    position: Number(row.position),
    attempt: Number(row.attempt),
    maxAttempts: Number(row.max_attempts ?? 1),
    device: row.claimed_device === null ? null : (JSON.parse(row.claimed_device) as AgentDevice),
    cancelRequested: Number(row.cancel_requested) === 1,
    testPlanId: row.test_plan_id ?? undefined,
    failureContext: {
      organizationId: row.organization_id,
      testPlanId: row.test_plan_id,
      executionId: row.execution_id,
      executionCreatedAt: row.execution_created_at,
      packageName: row.package_name,
      ownPackageNames: [row.package_name, testPackageName(row.test_package)].filter((name) => name !== null),
    },
    executionStatus: row.execution_status,
    executionVersion: row.execution_version,
    reports: toReports(row.reports),
    shard: Number(row.shard),
    shardCount: Number(row.shard_count),
    ...(row.kind === "session"
      ? { session: { result: (row.session_result ?? null) as "passed" | "failed" | null } }
      : {}),
  };
}

/** json_agg comes parsed (pg), json_group_array as text (SQLite); no test cases: null. */
function toReports(value: unknown): TestReport[] {
  if (value === null || value === undefined) return [];
  const rows = (typeof value === "string" ? JSON.parse(value) : value) as Array<
    [string, string, number, TestCaseStatus, number]
  >;
  return rows.map(([classname, name, attempt, status, quarantined]) => ({
    classname,
    name,
    attempt: Number(attempt),
    status,
    quarantined: Number(quarantined) === 1,
  }));
}

/** The test package's own package name (an instrumentation APK's manifest package), when it has one. */
function testPackageName(test: string | null): string | null {
  if (test === null) return null;
  const parsed = JSON.parse(test) as { package_name?: unknown };
  return typeof parsed.package_name === "string" ? parsed.package_name : null;
}
