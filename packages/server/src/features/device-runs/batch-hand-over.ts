/**
 * What ending an attempt does to the test batches its lease took (issue 15's shared design, rule 4), as the
 * SQL that end-attempt-query.ts runs inside the end's own statement (PostgreSQL) or transaction (SQLite):
 *
 * - The attempt ends for good (the run is not re-queued): its `running` batches go back to the queue without
 *   the tests this attempt already reported, so a device drained or lost mid-batch hands its remaining tests
 *   to the other shards, and a test it reported is counted once, as this run's final result (a batch whose
 *   every test was reported is done). An agent that completed with a batch unfinished hands it back the same.
 * - The attempt is re-queued: its test cases become history (the summary and the test list count the run's
 *   next attempt: test-summary.ts, test-case-view.ts), so every batch it took, running or done, goes back
 *   whole, to be run by whichever shard takes it, as an unsharded run re-queued runs all its tests again.
 *
 * Only a sharded run (shard_count > 1) has batches: an unsharded run's end does not touch test_batches.
 */
import { type RawBuilder, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";

/** The attempt whose end hands its batches back. */
export interface EndingLease {
  leaseId: string;
  deviceRunId: string;
  attempt: number;
}

/**
 * A running batch's tests that the attempt did not report (`test_batches` is the row being updated): `element`
 * over `from`, the elements of its JSON list with no test_case of that name in the attempt.
 */
function unreported(dialect: Dialect, lease: EndingLease) {
  const [elements, classname, name, element] =
    dialect === "postgres"
      ? [
          sql`json_array_elements(cast(test_batches.tests as json)) t`,
          sql`t.value ->> 'classname'`,
          sql`t.value ->> 'name'`,
          sql`t.value`,
        ]
      : [
          sql`json_each(test_batches.tests) t`,
          sql`json_extract(t.value, '$.classname')`,
          sql`json_extract(t.value, '$.name')`,
          sql`json(t.value)`,
        ];
  const reported = sql`select 1 from test_cases tc where tc.device_run_id = ${lease.deviceRunId}
    and tc.attempt = ${lease.attempt} and tc.classname = ${classname} and tc.name = ${name}`;
  return { element, from: sql`${elements} where not exists (${reported})` };
}

/**
 * The UPDATE handing back the lease's batches as its attempt ends (`requeued`: the run goes back to the
 * queue), RETURNING each batch's new state; `only`: a further condition (the run was really ended).
 */
export function handBackBatches(
  dialect: Dialect,
  lease: EndingLease,
  requeued: boolean,
  only: RawBuilder<unknown> = sql`true`,
): RawBuilder<{ state: string }> {
  if (requeued) {
    return sql<{
      state: string;
    }>`update test_batches set state = 'queued', lease_id = null, device_run_id = null
      where lease_id = ${lease.leaseId} and state in ('running', 'done') and ${only}
      returning state`;
  }
  const { element, from } = unreported(dialect, lease);
  const anyLeft = sql`exists (select 1 from ${from})`;
  const remaining =
    dialect === "postgres"
      ? sql`coalesce((select cast(json_agg(${element}) as text) from ${from}), '[]')`
      : sql`(select json_group_array(${element}) from ${from})`;
  // Every SET expression sees the row as it was, so each asks about the tests as the batch held them.
  return sql<{ state: string }>`update test_batches set
      tests = ${remaining},
      state = case when ${anyLeft} then 'queued' else 'done' end,
      lease_id = case when ${anyLeft} then null else lease_id end,
      device_run_id = case when ${anyLeft} then null else device_run_id end
    where lease_id = ${lease.leaseId} and state = 'running' and ${only}
    returning state`;
}
