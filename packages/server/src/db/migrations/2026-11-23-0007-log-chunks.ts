import type { Kysely } from "kysely";

/**
 * Step output moves out of the database: the lines themselves go to the blob store in chunk objects (one per
 * events batch), and this table is their index. A 500k-line log was half a million rows read on the request
 * path and grew the database by twice its size; as chunks it is a few hundred rows streamed from storage.
 *
 * `log_lines` stays for now, emptied: at start-up the server moves any rows left in it (logs written before
 * this migration) into chunks and deletes them (LogStore.adoptLegacyLines), so reads look in one place only.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // [first_seq, last_seq] is the range of the agent's event numbers the chunk covers: a resent batch whose
  // log lines fall inside a stored range was stored already. `truncated` marks the chunk that ends with the
  // marker line of the per-execution cap; nothing is stored after it.
  await db.schema
    .createTable("log_chunks")
    .addColumn("device_run_id", "text", (c) => c.notNull().references("device_runs.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("first_seq", "integer", (c) => c.notNull())
    .addColumn("last_seq", "integer", (c) => c.notNull())
    .addColumn("execution_id", "text", (c) => c.notNull().references("executions.id"))
    .addColumn("blob_key", "text", (c) => c.notNull())
    .addColumn("bytes", "bigint", (c) => c.notNull())
    .addColumn("lines", "integer", (c) => c.notNull())
    .addColumn("truncated", "integer", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("log_chunks_pk", ["device_run_id", "attempt", "first_seq"])
    .execute();
  // The cap is checked per execution on every batch: its running total is one indexed sum.
  await db.schema.createIndex("log_chunks_execution_idx").on("log_chunks").column("execution_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("log_chunks").execute();
}
