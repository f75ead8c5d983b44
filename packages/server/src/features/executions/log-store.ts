import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { type Kysely, sql } from "kysely";
import type { Database } from "../../db/schema.ts";
import { privateDirMode } from "../../fs-permissions.ts";
import { storableDeviceText } from "../../http/storable-text.ts";
import { newId } from "../../ids.ts";
import type { BlobStore } from "../../storage/index.ts";
import { removeStaleStagedFiles } from "../../storage/stale-staged-files.ts";
import type { AttemptRef } from "./results.repo.ts";

/** A log line as an agent reports it (one `log` event). */
export interface LogEvent {
  seq: number;
  at: string;
  stream: string;
  line: string;
}

export interface LogStoreOptions {
  db: Kysely<Database>;
  store: BlobStore;
  /** Where a chunk is written before it is moved into the store (a local directory of the data dir). */
  stagingDir: string;
  /** TESTBAY_MAX_EXECUTION_LOG_BYTES: past it, an execution's lines are dropped after one marker line. */
  maxExecutionBytes: number;
}

interface ChunkRange {
  first_seq: number;
  last_seq: number;
}

/** Index rows read per query when streaming: small, so no read holds SQLite's (synchronous) driver long. */
const indexPageSize = 64;

/** Legacy rows moved per step at start-up. */
const legacyPageSize = 1000;

/**
 * Step output, kept in the blob store as chunk objects (one per events batch of an attempt) holding the
 * lines already rendered as `GET …/log` shows them; the database keeps only an index (`log_chunks`). Reading a
 * log is then a few small index queries and streamed objects, whatever its size: nothing is read whole, and
 * the database no longer grows by twice the log.
 */
export class LogStore {
  constructor(private readonly options: LogStoreOptions) {}

  /**
   * Stores the log lines of one events batch. Lines whose seq falls inside a chunk stored earlier (a batch
   * resent after a lost answer) are skipped; the rest go to new chunks, split so that no chunk's seq range
   * straddles another's and reading chunks in first_seq order reads lines in seq order.
   *
   * The cap is checked against the total stored before this batch. Batches of several device runs of one
   * execution stored at the same moment may each fit on their own and overshoot it together, by at most one
   * batch (≤ 1 MiB, the JSON body limit) per device run: a bound, which a lock held across blob writes would
   * only tighten at the price of stalling every other write on SQLite's single connection.
   */
  async append(
    run: Pick<AttemptRef, "deviceRunId" | "attempt"> & { executionId: string },
    events: readonly LogEvent[],
  ): Promise<void> {
    if (events.length === 0) return;
    const sorted = [...events].sort((a, b) => a.seq - b.seq);
    const first = sorted[0] as LogEvent;
    const last = sorted.at(-1) as LogEvent;
    const stored = await this.options.db
      .selectFrom("log_chunks")
      .select(["first_seq", "last_seq"])
      .where("device_run_id", "=", run.deviceRunId)
      .where("attempt", "=", run.attempt)
      .where("first_seq", "<=", last.seq)
      .where("last_seq", ">=", first.seq)
      .orderBy("first_seq")
      .execute();
    const groups = newLineGroups(
      sorted,
      stored.map((r) => ({ first_seq: Number(r.first_seq), last_seq: Number(r.last_seq) })),
    );
    if (groups.length === 0) return;

    let { bytes: total, truncated } = await this.totals(run.executionId);
    for (const group of groups) {
      if (truncated) return;
      const texts: string[] = [];
      let bytes = 0;
      let lastSeq = (group[0] as LogEvent).seq;
      for (const event of group) {
        const text = renderLine(event.at, event.stream, event.line);
        const size = Buffer.byteLength(text);
        if (total + bytes + size > this.options.maxExecutionBytes) {
          truncated = true;
          const marker = renderLine(
            event.at,
            "agent",
            `[testbay] log truncated at ${this.options.maxExecutionBytes} bytes (TESTBAY_MAX_EXECUTION_LOG_BYTES): later lines were dropped`,
          );
          texts.push(marker);
          bytes += Buffer.byteLength(marker);
          lastSeq = event.seq;
          break;
        }
        texts.push(text);
        bytes += size;
        lastSeq = event.seq;
      }
      await this.putChunk(run, {
        firstSeq: (group[0] as LogEvent).seq,
        lastSeq,
        body: texts.join(""),
        bytes,
        lines: texts.length,
        truncated,
      });
      total += bytes;
    }
  }

  /**
   * The log of an execution as text, in reading order (device run, attempt, seq) with a header per
   * attempt: index rows a small page at a time, each chunk streamed from the store. The consumer pulls, so
   * a slow reader holds one chunk's read buffer, not the log.
   */
  async *read(executionId: string): AsyncGenerator<string | Buffer> {
    // Shards of one device entry share its position: each is its own section, in shard order.
    let after: { position: number; shard: number; attempt: number; firstSeq: number } | undefined;
    let section = "";
    for (;;) {
      let query = this.options.db
        .selectFrom("log_chunks")
        .innerJoin("device_runs", "device_runs.id", "log_chunks.device_run_id")
        .select([
          "device_runs.position as position",
          "device_runs.shard as shard",
          "device_runs.shard_count as shard_count",
          "log_chunks.attempt as attempt",
          "log_chunks.first_seq as first_seq",
          "log_chunks.last_seq as last_seq",
          "log_chunks.blob_key as blob_key",
        ])
        .where("log_chunks.execution_id", "=", executionId);
      if (after) {
        const { position, shard, attempt, firstSeq } = after;
        query = query.where(
          sql<boolean>`(device_runs.position, device_runs.shard, log_chunks.attempt, log_chunks.first_seq) > (${position}, ${shard}, ${attempt}, ${firstSeq})`,
        );
      }
      const rows = await query
        .orderBy("device_runs.position")
        .orderBy("device_runs.shard")
        .orderBy("log_chunks.attempt")
        .orderBy("log_chunks.first_seq")
        .limit(indexPageSize)
        .execute();
      for (const row of rows) {
        const position = Number(row.position);
        const shard = Number(row.shard);
        const shardCount = Number(row.shard_count);
        const attempt = Number(row.attempt);
        if (`${position}/${shard}/${attempt}` !== section) {
          section = `${position}/${shard}/${attempt}`;
          const which = shardCount > 1 ? ` shard ${shard + 1} of ${shardCount},` : "";
          yield `=== device ${position + 1},${which} attempt ${attempt} ===\n`;
        }
        yield* this.chunkText(row.blob_key, Number(row.first_seq), Number(row.last_seq));
      }
      const lastRow = rows.at(-1);
      if (!lastRow || rows.length < indexPageSize) return;
      after = {
        position: Number(lastRow.position),
        shard: Number(lastRow.shard),
        attempt: Number(lastRow.attempt),
        firstSeq: Number(lastRow.first_seq),
      };
    }
  }

  /**
   * Start-up housekeeping: removes chunks staged by a run that died before storing them, and moves log lines
   * written before logs went to the blob store (table `log_lines`) into chunks, deleting them as it goes.
   * Safe to repeat and to run on several instances at once: lines already in a chunk are skipped by seq.
   */
  async startUp(log: FastifyBaseLogger): Promise<void> {
    const { db, stagingDir } = this.options;
    await removeStaleStagedFiles(stagingDir, log, "a log chunk");
    let moved = 0;
    for (;;) {
      const attempt = await db
        .selectFrom("log_lines")
        .innerJoin("device_runs", "device_runs.id", "log_lines.device_run_id")
        .select(["log_lines.device_run_id", "log_lines.attempt", "device_runs.execution_id"])
        .limit(1)
        .executeTakeFirst();
      if (!attempt) break;
      const run = {
        deviceRunId: attempt.device_run_id,
        attempt: Number(attempt.attempt),
        executionId: attempt.execution_id,
      };
      const rows = await db
        .selectFrom("log_lines")
        .select(["seq", "at", "stream", "line"])
        .where("device_run_id", "=", run.deviceRunId)
        .where("attempt", "=", run.attempt)
        .orderBy("seq")
        .limit(legacyPageSize)
        .execute();
      const events = rows.map((row) => ({ ...row, seq: Number(row.seq) }));
      await this.append(run, events);
      await db
        .deleteFrom("log_lines")
        .where("device_run_id", "=", run.deviceRunId)
        .where("attempt", "=", run.attempt)
        .where("seq", "<=", (events.at(-1) as LogEvent).seq)
        .execute();
      moved += events.length;
    }
    if (moved > 0) log.info({ lines: moved }, "moved log lines from the database to the blob store");
  }

  private async totals(executionId: string): Promise<{ bytes: number; truncated: boolean }> {
    const row = await this.options.db
      .selectFrom("log_chunks")
      .select([
        sql<number | string | null>`sum(bytes)`.as("bytes"),
        sql<number | string | null>`max(truncated)`.as("truncated"),
      ])
      .where("execution_id", "=", executionId)
      .executeTakeFirst();
    return { bytes: Number(row?.bytes ?? 0), truncated: Number(row?.truncated ?? 0) === 1 };
  }

  /**
   * Writes a chunk object, then its index row. The object is written first so a row never points at
   * nothing; when the row cannot be added (the same batch stored at the same moment by a concurrent
   * request), the object is deleted again.
   */
  private async putChunk(
    run: Pick<AttemptRef, "deviceRunId" | "attempt"> & { executionId: string },
    chunk: {
      firstSeq: number;
      lastSeq: number;
      body: string;
      bytes: number;
      lines: number;
      truncated: boolean;
    },
  ): Promise<void> {
    const { db, store, stagingDir } = this.options;
    const id = newId("blob");
    const key = `logs/${run.executionId}/${id}`;
    const staged = path.join(stagingDir, `${id}.part`);
    await mkdir(stagingDir, { recursive: true, mode: privateDirMode });
    try {
      await writeFile(staged, chunk.body, { mode: 0o600 });
      await store.putFile(key, staged);
    } finally {
      await rm(staged, { force: true });
    }
    let inserted = false;
    try {
      const result = await db
        .insertInto("log_chunks")
        .values({
          device_run_id: run.deviceRunId,
          attempt: run.attempt,
          first_seq: chunk.firstSeq,
          last_seq: chunk.lastSeq,
          execution_id: run.executionId,
          blob_key: key,
          bytes: chunk.bytes,
          lines: chunk.lines,
          truncated: chunk.truncated ? 1 : 0,
        })
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      inserted = Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    } finally {
      if (!inserted) await store.delete(key);
    }
  }

  private async *chunkText(key: string, firstSeq: number, lastSeq: number): AsyncGenerator<string | Buffer> {
    let stream: AsyncIterable<Buffer>;
    try {
      stream = await this.options.store.read(key);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // A lost object (storage restored from an older backup, say) loses its lines, not the rest of the log.
      yield `[testbay] lines ${firstSeq}–${lastSeq} of this attempt are missing from storage\n`;
      return;
    }
    yield* stream;
  }
}

/** A line as `GET …/log` shows it; what the database or a reader could not take is escaped. */
function renderLine(at: string, stream: string, line: string): string {
  return `${at} [${stream}] ${storableDeviceText(line)}\n`;
}

/**
 * The lines of a batch not stored yet (outside every stored range, first of any repeated seq), in runs that
 * do not straddle a stored range. `sorted` is in seq order; `stored` holds the ranges that overlap it, in
 * first_seq order.
 */
export function newLineGroups(sorted: readonly LogEvent[], stored: readonly ChunkRange[]): LogEvent[][] {
  const groups: LogEvent[][] = [];
  let current: LogEvent[] = [];
  let range = 0;
  let previous: number | undefined;
  for (const event of sorted) {
    if (event.seq === previous) continue;
    previous = event.seq;
    let crossed = false;
    while (range < stored.length && (stored[range] as ChunkRange).last_seq < event.seq) {
      range++;
      crossed = true;
    }
    const within = range < stored.length && (stored[range] as ChunkRange).first_seq <= event.seq;
    if (crossed && current.length > 0) {
      groups.push(current);
      current = [];
    }
    if (within) continue;
    current.push(event);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
