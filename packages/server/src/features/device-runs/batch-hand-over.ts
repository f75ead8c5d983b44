/**
 * What ending an attempt does to the test batches its lease took (issue 15's shared design, rule 4), as the
 * SQL that end-attempt-query.ts runs inside the end's own statement (PostgreSQL) or transaction (SQLite):
 *
 * - Batches still `running` go back to the queue, so a device drained or lost mid-batch hands its remaining
 *   tests to the other shards (and an agent that completed with a batch unfinished hands it back too).
 * - When the attempt is re-queued, its `done` batches go back as well. A re-queued attempt's test cases are
 *   history: the run's next attempt is what the summary and the test list count (test-summary.ts,
 *   test-case-view.ts). Batches it finished but that no attempt counts would be tests nobody reported, so
 *   they are run again, by whichever shard takes them, as an unsharded run re-queued runs all its tests again.
 *
 * Only a sharded run (shard_count > 1) has batches: an unsharded run's end does not touch test_batches.
 */
import { type RawBuilder, sql } from "kysely";

/** The states of a lease's batches that go back to the queue when its attempt ends. */
export function returnedStates(requeued: boolean): RawBuilder<unknown> {
  return requeued ? sql`('running', 'done')` : sql`('running')`;
}

/** The UPDATE handing back `leaseId`'s batches, for a run ending with `requeued`; `only`: a further condition. */
export function handBackBatches(
  leaseId: string,
  requeued: boolean,
  only: RawBuilder<unknown> = sql`true`,
): RawBuilder<unknown> {
  return sql`update test_batches set state = 'queued', lease_id = null, device_run_id = null
    where lease_id = ${leaseId} and state in ${returnedStates(requeued)} and ${only}`;
}
