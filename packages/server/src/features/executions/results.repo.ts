import type { Kysely } from "kysely";
import type { Database, TestCaseStatus } from "../../db/schema.ts";
import { storableDeviceText, storableDeviceTextOrNull } from "../../http/storable-text.ts";
import { insertTestCases } from "../device-runs/index.ts";
import type { FailureContext } from "../failures/index.ts";
import { testId } from "../tests/test-id.ts";
import { testsOwnerOf } from "./tests-owner.ts";

/** One attempt of one device run: where reported results belong. */
export interface AttemptRef {
  deviceRunId: string;
  attempt: number;
  /** The run's execution, plan and packages, read with its lease: test ids and failure groups are made from them. */
  failureContext: FailureContext;
}

export type RunEvent =
  | { seq: number; type: "log"; at: string; stream: "stdout" | "stderr" | "agent"; line: string }
  | { seq: number; type: "step_started"; at: string; step_index: number }
  | {
      seq: number;
      type: "step_finished";
      at: string;
      step_index: number;
      status: "passed" | "failed" | "errored" | "cancelled" | "skipped";
      message?: string | null;
    }
  | {
      seq: number;
      type: "test_case";
      step_index: number;
      classname: string;
      name: string;
      status: TestCaseStatus;
      duration_ms?: number | null;
      message?: string | null;
      details?: string | null;
      artifacts?: string[];
      video_offset_ms?: number | null;
      retry?: number | null;
    };

export interface ArtifactRecord {
  deviceRunId: string;
  attempt: number;
  name: string;
  executionId: string;
  sizeBytes: number;
  sha256: string;
  contentType: string;
  blobKey: string;
  createdAt: string;
}

export interface StoredTestCase {
  deviceRunId: string;
  attempt: number;
  stepIndex: number;
  classname: string;
  name: string;
  status: TestCaseStatus;
  durationMs: number | null;
  message: string | null;
  details: string | null;
  /** Names of artifacts of the same attempt captured for this test. */
  artifacts: string[];
  /** How far into its video segment it failed (ms), when the agent recorded one. */
  videoOffsetMs: number | null;
  /** Which try within the attempt (0 first run, 1.. reruns alone); null from agents that did not say. */
  retry: number | null;
}

export interface StepResult {
  deviceRunId: string;
  attempt: number;
  stepIndex: number;
  status: string;
  message: string | null;
  startedAt: string;
  finishedAt: string | null;
}

/** What agents report about their runs: step results, test cases and artifacts (log lines: LogStore). */
export class ResultsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Stores the step results and test cases of a batch of events of one attempt (its log lines go to the
   * LogStore). Test cases are keyed by the agent's `seq`, so a batch sent again after a lost answer is stored
   * once. What the agent reports is stored as reported, with only what no database can hold escaped.
   */
  async recordBatch(run: AttemptRef, events: readonly RunEvent[]): Promise<void> {
    await this.db.transaction().execute((trx) => this.record(trx, run, events));
  }

  private async record(db: Kysely<Database>, run: AttemptRef, events: readonly RunEvent[]): Promise<void> {
    const cases = [];
    const { executionId, testPlanId } = run.failureContext;
    const testsOwner = testsOwnerOf({ id: executionId, testPlanId });
    for (const event of events) {
      if (event.type === "log") continue;
      if (event.type === "test_case") {
        const classname = storableDeviceText(event.classname);
        const name = storableDeviceText(event.name);
        cases.push({
          device_run_id: run.deviceRunId,
          attempt: run.attempt,
          seq: event.seq,
          step_index: event.step_index,
          classname,
          name,
          // Hashed from the stored names, as GET /executions/{id}/tests and GET /tests hash them.
          test_id: testId(testsOwner, classname, name),
          status: event.status,
          duration_ms: event.duration_ms ?? null,
          message: storableDeviceTextOrNull(event.message),
          details: storableDeviceTextOrNull(event.details),
          artifacts: event.artifacts?.length ? JSON.stringify(event.artifacts.map(storableDeviceText)) : null,
          video_offset_ms: event.video_offset_ms ?? null,
          retry: event.retry ?? null,
        });
      } else {
        // A step's row: made when it starts, completed when it finishes (a finish may come alone).
        const finished = event.type === "step_finished";
        const result = {
          status: finished ? event.status : "running",
          message: finished ? storableDeviceTextOrNull(event.message) : null,
          finished_at: finished ? event.at : null,
        };
        await db
          .insertInto("step_results")
          .values({
            device_run_id: run.deviceRunId,
            attempt: run.attempt,
            step_index: event.step_index,
            started_at: event.at,
            ...result,
          })
          .onConflict((conflict) =>
            finished
              ? conflict.columns(["device_run_id", "attempt", "step_index"]).doUpdateSet(result)
              : conflict.doNothing(),
          )
          .execute();
      }
    }
    // Keyed by the agent's seq: a batch sent again is stored once.
    await insertTestCases(db, cases, "ignored", run.failureContext);
  }

  async testCases(executionId: string): Promise<StoredTestCase[]> {
    const rows = await this.db
      .selectFrom("test_cases")
      .innerJoin("device_runs", "device_runs.id", "test_cases.device_run_id")
      .selectAll("test_cases")
      .where("device_runs.execution_id", "=", executionId)
      .orderBy("device_runs.position")
      .orderBy("test_cases.attempt")
      .orderBy("test_cases.seq")
      .execute();
    return rows.map((row) => ({
      deviceRunId: row.device_run_id,
      attempt: Number(row.attempt),
      stepIndex: Number(row.step_index),
      classname: row.classname,
      name: row.name,
      status: row.status,
      durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
      message: row.message,
      details: row.details,
      artifacts: row.artifacts === null ? [] : (JSON.parse(row.artifacts) as string[]),
      videoOffsetMs: row.video_offset_ms === null ? null : Number(row.video_offset_ms),
      retry: row.retry === null ? null : Number(row.retry),
    }));
  }

  async stepResults(executionIds: readonly string[]): Promise<StepResult[]> {
    if (executionIds.length === 0) return [];
    const rows = await this.db
      .selectFrom("step_results")
      .innerJoin("device_runs", "device_runs.id", "step_results.device_run_id")
      .selectAll("step_results")
      .where("device_runs.execution_id", "in", executionIds)
      .whereRef("step_results.attempt", "=", "device_runs.attempt")
      .orderBy("step_results.step_index")
      .execute();
    return rows.map((row) => ({
      deviceRunId: row.device_run_id,
      attempt: Number(row.attempt),
      stepIndex: Number(row.step_index),
      status: row.status,
      message: row.message,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
    }));
  }

  /**
   * Records an artifact; one already recorded under the name in the same attempt is replaced, and its
   * blob key returned so the caller can delete the old object.
   *
   * Two uploads of one name may finish at the same moment (an agent retrying an upload whose answer it
   * lost). A look-then-insert would let both insert on PostgreSQL (read committed) and one fail on the key;
   * instead the insert yields on conflict, and a replacement swaps the row only if it still holds the
   * blob key it read, trying again otherwise: the last to finish wins and every replaced blob is returned
   * exactly once.
   */
  async putArtifact(artifact: ArtifactRecord): Promise<string | undefined> {
    const inserted = await this.db
      .insertInto("artifacts")
      .values({
        device_run_id: artifact.deviceRunId,
        attempt: artifact.attempt,
        name: artifact.name,
        execution_id: artifact.executionId,
        size_bytes: artifact.sizeBytes,
        sha256: artifact.sha256,
        content_type: artifact.contentType,
        blob_key: artifact.blobKey,
        created_at: artifact.createdAt,
      })
      .onConflict((conflict) => conflict.doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return undefined;
    for (let attempt = 0; attempt < 10; attempt++) {
      const existing = await this.db
        .selectFrom("artifacts")
        .select("blob_key")
        .where("device_run_id", "=", artifact.deviceRunId)
        .where("attempt", "=", artifact.attempt)
        .where("name", "=", artifact.name)
        .executeTakeFirstOrThrow();
      const swapped = await this.db
        .updateTable("artifacts")
        .set({
          size_bytes: artifact.sizeBytes,
          sha256: artifact.sha256,
          content_type: artifact.contentType,
          blob_key: artifact.blobKey,
          created_at: artifact.createdAt,
        })
        .where("device_run_id", "=", artifact.deviceRunId)
        .where("attempt", "=", artifact.attempt)
        .where("name", "=", artifact.name)
        .where("blob_key", "=", existing.blob_key)
        .executeTakeFirst();
      if (Number(swapped.numUpdatedRows) > 0) return existing.blob_key;
    }
    throw new Error(`artifact ${artifact.name}: replaced concurrently ten times in a row`);
  }

  async artifacts(executionId: string): Promise<Array<ArtifactRecord & { position: number; shard: number }>> {
    const rows = await this.db
      .selectFrom("artifacts")
      .innerJoin("device_runs", "device_runs.id", "artifacts.device_run_id")
      .selectAll("artifacts")
      .select(["device_runs.position as position", "device_runs.shard as shard"])
      .where("artifacts.execution_id", "=", executionId)
      .orderBy("device_runs.position")
      .orderBy("device_runs.shard")
      .orderBy("artifacts.attempt")
      .orderBy("artifacts.name")
      .execute();
    return rows.map((row) => ({
      deviceRunId: row.device_run_id,
      attempt: Number(row.attempt),
      name: row.name,
      executionId: row.execution_id,
      sizeBytes: Number(row.size_bytes),
      sha256: row.sha256,
      contentType: row.content_type,
      blobKey: row.blob_key,
      createdAt: row.created_at,
      position: Number(row.position),
      shard: Number(row.shard),
    }));
  }
}
