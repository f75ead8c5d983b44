/**
 * Tests no shard is left to run. A sharded run's attempt that ends for good (no attempt left, or cancelled)
 * hands its unfinished batch back to the queue (batch-hand-over.ts), but when no other shard of its device
 * entry is still queued or running, nobody will ever take it; and a `uniform` batch is fixed to its shard, so
 * when that shard ends for good its batch is stranded whatever the other shards do. Without this, those tests
 * would be missing from the results: API.md §5 wants the unfinished tests `errored`, not missing.
 *
 * So before such an end is counted, each stranded test becomes an `errored` "did not run" case of the ending
 * attempt, and its batch is marked done as this lease's: the attempt's summary, the run's status and the
 * execution's summary then count every listed test. Called inside the end's transaction, which holds the run
 * and its execution locked (PostgreSQL) or is the only writer (SQLite), so no sibling starts or ends meanwhile.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { testId } from "../tests/test-id.ts";
import type { HeldRun } from "./held-run.ts";
import { insertTestCases } from "./test-cases-query.ts";
import type { TestReport } from "./test-summary.ts";

/** Test ids per quarantine lookup, far below SQLite's and PostgreSQL's bound-parameter limits. */
const lookupChunk = 500;

interface Stranded {
  stepIndex: number;
  classname: string;
  name: string;
}

/**
 * Records the tests stranded by `held`'s attempt ending for good (`cause`: the reason, or the status, said in
 * each case's message) and returns them as reports of the attempt, to be counted with the others.
 */
export async function recordStrandedTests(
  db: Kysely<Database>,
  held: HeldRun,
  cause: string,
): Promise<TestReport[]> {
  const batches = await db
    .selectFrom("test_batches")
    .select(["id", "step_index", "tests"])
    .where("execution_id", "=", held.executionId)
    .where("position", "=", held.position)
    .where((eb) =>
      eb.or([
        eb("state", "=", "queued"),
        eb.and([eb("state", "=", "running"), eb("lease_id", "=", held.leaseId)]),
      ]),
    )
    .where((eb) =>
      eb.or([
        eb("shard", "=", held.shard),
        eb.and([
          eb("shard", "is", null),
          eb.not(
            eb.exists(
              eb
                .selectFrom("device_runs")
                .select("id")
                .where("execution_id", "=", held.executionId)
                .where("position", "=", held.position)
                .where("id", "<>", held.deviceRunId)
                .where("status", "in", ["queued", "running"]),
            ),
          ),
        ]),
      ]),
    )
    .orderBy("seq")
    .execute();
  if (batches.length === 0) return [];

  const reported = new Set(
    held.reports.filter((report) => report.attempt === held.attempt).map((report) => key(report)),
  );
  const stranded: Stranded[] = batches.flatMap((batch) =>
    (JSON.parse(batch.tests) as Array<{ classname: string; name: string }>)
      .filter((test) => !reported.has(key(test)))
      .map((test) => ({ stepIndex: Number(batch.step_index), ...test })),
  );
  await db
    .updateTable("test_batches")
    .set({ state: "done", lease_id: held.leaseId, device_run_id: held.deviceRunId })
    .where(
      "id",
      "in",
      batches.map((batch) => batch.id),
    )
    .execute();
  if (stranded.length === 0 || held.testPlanId === undefined) return [];

  const testPlanId = held.testPlanId;
  const { last } = await db
    .selectFrom("test_cases")
    .select((eb) => eb.fn.max("seq").as("last"))
    .where("device_run_id", "=", held.deviceRunId)
    .where("attempt", "=", held.attempt)
    .executeTakeFirstOrThrow();
  const firstSeq = last === null ? 0 : Number(last) + 1;
  const message = `did not run: shard ${held.shard + 1} of ${held.shardCount} ended (${cause}) before running it, and no shard was left to take it`;
  const rows = stranded.map((test, i) => ({
    device_run_id: held.deviceRunId,
    attempt: held.attempt,
    seq: firstSeq + i,
    step_index: test.stepIndex,
    classname: test.classname,
    name: test.name,
    test_id: testId(testPlanId, test.classname, test.name),
    status: "errored" as const,
    duration_ms: null,
    message,
    details: null,
    artifacts: null,
    video_offset_ms: null,
    retry: null,
  }));
  // Numbered after the attempt's last case, in the end's transaction: a repeated seq would be a fault, refused.
  await insertTestCases(db, rows, "refused", held.failureContext);
  const quarantined = await quarantinedOf(
    db,
    held.organizationId,
    rows.map((row) => row.test_id),
  );
  return rows.map((row) => ({
    classname: row.classname,
    name: row.name,
    attempt: held.attempt,
    status: row.status,
    quarantined: quarantined.has(row.test_id),
  }));
}

async function quarantinedOf(
  db: Kysely<Database>,
  organizationId: string,
  testIds: readonly string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < testIds.length; i += lookupChunk) {
    const rows = await db
      .selectFrom("test_quarantines")
      .select("test_id")
      .where("organization_id", "=", organizationId)
      .where("test_id", "in", testIds.slice(i, i + lookupChunk))
      .execute();
    for (const row of rows) found.add(row.test_id);
  }
  return found;
}

function key(test: { classname: string; name: string }): string {
  return `${test.classname}\u0000${test.name}`;
}
