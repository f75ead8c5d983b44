/**
 * Storing test cases: the only statement that inserts test_cases rows. Agents report them with their
 * attempt's events (ResultsRepo.recordBatch in features/executions/results.repo.ts), and an attempt that
 * ends for good records the tests no shard is left to run (stranded-tests.ts). The attempt's end counts
 * them (held-run.ts reads them, test-summary.ts counts them), so what they are is device-runs' to say.
 */
import type { Insertable, Kysely } from "kysely";
import type { Database, TestCasesTable } from "../../db/schema.ts";
import {
  type FailureContext,
  recordFailureGroups,
  type StoredFailure,
} from "../failures/failure-groups.writer.ts";
import { failureSignature } from "../failures/failure-signature.ts";

/** Rows per INSERT: 15 values each, far below SQLite's (32,766) and PostgreSQL's bound-parameter limits. */
const insertChunk = 500;

/**
 * Inserts the rows in chunks, within the caller's transaction. A row is keyed by its run, attempt and seq:
 * `sameSeq` "ignored" stores once a case an agent sent again (its answer was lost), "refused" fails the
 * statement, for a writer that numbers the cases itself and so never repeats one.
 *
 * Each failed or errored case gets its failure group's signature (API.md §16), computed from `failures` (read
 * with the run's lease), and the groups of the cases this call stored are brought up to date in one more
 * statement (failures/failure-groups.writer.ts): a batch without failures costs nothing more.
 */
export async function insertTestCases(
  db: Kysely<Database>,
  rows: ReadonlyArray<Insertable<TestCasesTable>>,
  sameSeq: "ignored" | "refused",
  failures: FailureContext,
): Promise<void> {
  const signed = rows.map((row) => withFailureSignature(row, failures.ownPackageNames));
  const stored: StoredFailure[] = [];
  for (let i = 0; i < signed.length; i += insertChunk) {
    const chunk = signed.slice(i, i + insertChunk);
    const insert = db.insertInto("test_cases").values(chunk);
    const statement = sameSeq === "ignored" ? insert.onConflict((conflict) => conflict.doNothing()) : insert;
    if (!chunk.some((row) => row.failure_signature)) {
      await statement.execute();
      continue;
    }
    // Only what this insert stored counts: a case sent again is already in its group.
    const inserted = await statement
      .returning(["device_run_id", "attempt", "seq", "test_id", "failure_signature"])
      .execute();
    for (const row of inserted) {
      if (row.failure_signature) stored.push({ ...row, failure_signature: row.failure_signature });
    }
  }
  await recordFailureGroups(db, failures, stored);
}

/** The row with its failure group's signature when it failed or errored (and does not carry one already). */
function withFailureSignature(
  row: Insertable<TestCasesTable>,
  ownPackageNames: readonly string[],
): Insertable<TestCasesTable> {
  if ((row.status !== "failed" && row.status !== "errored") || row.failure_signature !== undefined)
    return row;
  const signature = failureSignature({
    message: row.message ?? null,
    details: row.details ?? null,
    packageNames: ownPackageNames,
  });
  return { ...row, failure_signature: signature?.signature ?? null };
}
