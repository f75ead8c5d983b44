/**
 * Storing test cases: the only statement that inserts test_cases rows. Agents report them with their
 * attempt's events (ResultsRepo.recordBatch in features/executions/results.repo.ts), and an attempt that
 * ends for good records the tests no shard is left to run (stranded-tests.ts). The attempt's end counts
 * them (held-run.ts reads them, test-summary.ts counts them), so what they are is device-runs' to say.
 */
import type { Insertable, Kysely } from "kysely";
import type { Database, TestCasesTable } from "../../db/schema.ts";

/** Rows per INSERT: 14 values each, far below SQLite's (32,766) and PostgreSQL's bound-parameter limits. */
const insertChunk = 500;

/**
 * Inserts the rows in chunks, within the caller's transaction. A row is keyed by its run, attempt and seq:
 * `sameSeq` "ignored" stores once a case an agent sent again (its answer was lost), "refused" fails the
 * statement, for a writer that numbers the cases itself and so never repeats one.
 */
export async function insertTestCases(
  db: Kysely<Database>,
  rows: ReadonlyArray<Insertable<TestCasesTable>>,
  sameSeq: "ignored" | "refused",
): Promise<void> {
  for (let i = 0; i < rows.length; i += insertChunk) {
    const insert = db.insertInto("test_cases").values(rows.slice(i, i + insertChunk));
    await (sameSeq === "ignored" ? insert.onConflict((conflict) => conflict.doNothing()) : insert).execute();
  }
}
