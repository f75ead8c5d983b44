/**
 * The only writer of failure_groups (migration 0035): per organization, plan and signature, how many failed cases
 * a group has and its first and last occurrence, brought up to date by one statement after each insert of test
 * cases with failures in it (device-runs/test-cases-query.ts). GET /failures then reads a row per group and plan
 * (failures.repo.ts) instead of aggregating every failed case: over a million cases that aggregate took 225 ms at
 * p50 (`npm run bench -- failures`), and API.md §16 allows 200 at p99.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import { type Dialect, dialectOf } from "../../db/kysely.ts";
import type { Database } from "../../db/schema.ts";

/** What a device run's failures are grouped with: read with its lease (device-runs/held-run.ts), never looked up. */
export interface FailureContext {
  organizationId: string;
  /** Null for a WebDriver session's run: it has no plan, and its failures are in no group. */
  testPlanId: string | null;
  executionId: string;
  executionCreatedAt: string;
  /** The execution's app, null for a session without one. */
  packageName: string | null;
  /** The app's and its test package's package names: what counts as the app's own code in a stack. */
  ownPackageNames: string[];
}

/** A failed case as stored: its key, its test and its signature. */
export interface StoredFailure {
  device_run_id: string;
  attempt: number;
  seq: number;
  test_id: string | null;
  failure_signature: string;
}

export async function recordFailureGroups(
  db: Kysely<Database>,
  context: FailureContext,
  failures: readonly StoredFailure[],
): Promise<void> {
  const { testPlanId } = context;
  if (testPlanId === null || failures.length === 0) return;
  // One row per signature (PostgreSQL refuses a statement that updates a row twice), its latest case the example;
  // sorted, so that two transactions upserting the same groups lock them in the same order.
  const bySignature = new Map<string, { occurrences: number; latest: StoredFailure; tests: Set<string> }>();
  for (const failure of failures) {
    let seen = bySignature.get(failure.failure_signature);
    if (!seen) {
      seen = { occurrences: 0, latest: failure, tests: new Set() };
      bySignature.set(failure.failure_signature, seen);
    }
    seen.occurrences += 1;
    if (later(failure, seen.latest)) seen.latest = failure;
    if (failure.test_id !== null) seen.tests.add(failure.test_id);
  }
  const rows = [...bySignature]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([signature, { occurrences, latest, tests }]) => ({
      organization_id: context.organizationId,
      test_plan_id: testPlanId,
      signature,
      package_name: context.packageName,
      occurrences,
      test_ids: JSON.stringify([...tests].sort()),
      first_at: context.executionCreatedAt,
      first_execution_id: context.executionId,
      last_at: context.executionCreatedAt,
      last_execution_id: context.executionId,
      last_device_run_id: latest.device_run_id,
      last_attempt: latest.attempt,
      last_seq: latest.seq,
    }));
  // The first occurrence is the earliest execution (its time, then its id); the last, the latest case (its
  // execution's time and id, then its run, attempt and seq), as GET /failures/{signature}/occurrences orders them.
  const earlier = sql<boolean>`(excluded.first_at, excluded.first_execution_id) < (failure_groups.first_at, failure_groups.first_execution_id)`;
  const newer = sql<boolean>`(excluded.last_at, excluded.last_execution_id, excluded.last_device_run_id, excluded.last_attempt, excluded.last_seq)
    > (failure_groups.last_at, failure_groups.last_execution_id, failure_groups.last_device_run_id, failure_groups.last_attempt, failure_groups.last_seq)`;
  const pick = <T>(when: typeof earlier, column: string) =>
    sql<T>`case when ${when} then ${sql.ref(`excluded.${column}`)} else ${sql.ref(`failure_groups.${column}`)} end`;
  await db
    .insertInto("failure_groups")
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(["organization_id", "test_plan_id", "signature"]).doUpdateSet((eb) => ({
        occurrences: eb("failure_groups.occurrences", "+", eb.ref("excluded.occurrences")),
        // Merging the groups' sets of test ids is the one part of the statement that differs by database.
        test_ids: mergedTestIds(dialectOf(db)),
        first_at: pick<string>(earlier, "first_at"),
        first_execution_id: pick<string>(earlier, "first_execution_id"),
        last_at: pick<string>(newer, "last_at"),
        last_execution_id: pick<string>(newer, "last_execution_id"),
        last_device_run_id: pick<string>(newer, "last_device_run_id"),
        last_attempt: pick<number>(newer, "last_attempt"),
        last_seq: pick<number>(newer, "last_seq"),
      })),
    )
    .execute();
}

/**
 * The stored set of test ids (a sorted JSON array of strings) and the batch's, as one: the tests a group failed
 * in, which GET /failures counts and its fixed check asks to have passed (failures.service.ts).
 */
function mergedTestIds(dialect: Dialect): RawBuilder<string> {
  return dialect === "postgres"
    ? sql<string>`(select coalesce(json_agg(id order by id), '[]')::text from (
        select json_array_elements_text(failure_groups.test_ids::json) as id
        union select json_array_elements_text(excluded.test_ids::json)) as ids)`
    : sql<string>`(select json_group_array(id) from (
        select value as id from json_each(failure_groups.test_ids)
        union select value from json_each(excluded.test_ids) order by 1))`;
}

const later = (a: StoredFailure, b: StoredFailure) =>
  a.device_run_id !== b.device_run_id
    ? a.device_run_id > b.device_run_id
    : a.attempt !== b.attempt
      ? a.attempt > b.attempt
      : a.seq > b.seq;
