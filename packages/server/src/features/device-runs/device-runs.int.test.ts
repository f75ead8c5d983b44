// The device runs' SQL against the pure decisions it writes, on the project's database (SQLite or PostgreSQL):
// settling an execution (settle-query.ts) against execution-outcome.ts for every mix of run statuses, and the
// lifecycle's claims and ends of attempts racing each other. The HTTP protocol around it is tested in
// features/agent; here the database is driven directly, so that many executions can be set up at once.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/harness.ts";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "../../db/kysely.ts";
import type { ExecutionStatus } from "../../db/schema.ts";
import { eventsOf } from "../events/index.ts";
import { DeviceRuns } from "./device-runs.ts";
import { addSummaries, executionStatus, tally } from "./execution-outcome.ts";
import { readHeld } from "./held-run.ts";
import { settleExecution } from "./settle-query.ts";
import type { Summary } from "./test-summary.ts";

let dir: string;
let store: TestDatabase;
let database: DatabaseHandle;
let runs: DeviceRuns;
let serial = 0;
const at = "2026-11-24T12:00:00.000Z";
const org = "org_lifecycle";

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-device-runs-"));
  store = await createTestDatabase(dir);
  database = openDatabase(store.url);
  await migrateToLatest(database.db);
  runs = new DeviceRuns(database.db, database.dialect);
  const db = database.db;
  await db.insertInto("organizations").values({ id: org, name: "lifecycle", created_at: at }).execute();
  await db
    .insertInto("apps")
    .values({
      id: "app_1",
      organization_id: org,
      package_name: "com.example.basic",
      package_name_folded: "com.example.basic",
      platform: "android",
      display_name: null,
      created_at: at,
    })
    .execute();
  await db
    .insertInto("app_versions")
    .values({
      id: "ver_1",
      app_id: "app_1",
      version: "1.0.0",
      size_bytes: 10,
      sha256: "0".repeat(64),
      blob_key: "binaries/ver_1",
      binary: "{}",
      created_at: at,
      deleted_at: null,
    })
    .execute();
});

afterAll(async () => {
  await database?.close();
  await store?.drop();
  await rm(dir, { recursive: true, force: true });
});

interface RunSpec {
  status: ExecutionStatus;
  summary?: Summary | null;
}

/** An execution with these device runs (queued ones unclaimed), as a trigger and earlier attempts left it. */
async function execution(specs: readonly RunSpec[], options: { started?: boolean } = {}): Promise<string> {
  const id = `ex_${++serial}`;
  await database.db
    .insertInto("executions")
    .values({
      id,
      organization_id: org,
      test_plan_id: "tp_1",
      app_version_id: "ver_1",
      package_name: "com.example.basic",
      version: "1.0.0",
      status: options.started ? "running" : "queued",
      plan: JSON.stringify({ steps: [{ type: "inspect" }] }),
      env: "{}",
      summary: JSON.stringify({ tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 }),
      cancel_requested: 0,
      triggered_by: "cl_1",
      created_at: at,
      started_at: options.started ? at : null,
      finished_at: null,
    })
    .execute();
  if (specs.length > 0) {
    await database.db
      .insertInto("device_runs")
      .values(
        specs.map((spec, position) => ({
          id: `${id}_dr${position}`,
          execution_id: id,
          position,
          device: null,
          status: spec.status,
          attempt: 1,
          created_at: `${at.slice(0, -5)}${String(serial % 1000).padStart(3, "0")}Z`,
          started_at: null,
          finished_at: null,
          organization_id: org,
          required_platform: null,
          required_model: null,
          required_os_version: null,
          needs: "inspect",
          max_attempts: 1,
          lease_id: null,
          lease_expires_at: null,
          agent_id: null,
          claimed_device: null,
          reason: null,
          summary: spec.summary ? JSON.stringify(spec.summary) : null,
        })),
      )
      .execute();
  }
  return id;
}

async function executionRow(id: string) {
  return database.db
    .selectFrom("executions")
    .select(["status", "summary", "started_at", "finished_at"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

const statuses: ExecutionStatus[] = ["queued", "running", "passed", "failed", "errored", "cancelled"];

/** Every multiset of `size` statuses (order does not matter to the outcome). */
function mixes(size: number, from = 0): ExecutionStatus[][] {
  if (size === 0) return [[]];
  const out: ExecutionStatus[][] = [];
  for (let i = from; i < statuses.length; i++) {
    for (const rest of mixes(size - 1, i)) out.push([statuses[i] as ExecutionStatus, ...rest]);
  }
  return out;
}

describe("settling an execution", () => {
  it("sets the status, summary and times execution-outcome.ts derives, for every mix of up to three runs", async () => {
    const cases: Array<{ id: string; specs: RunSpec[]; started: boolean }> = [];
    for (const size of [0, 1, 2, 3]) {
      for (const mix of mixes(size)) {
        for (const started of [false, true]) {
          const specs = mix.map((status, i) => ({
            status,
            // Every other run has a summary, each with different counts, so a mixed-up column shows.
            summary:
              i % 2 === 0
                ? {
                    tests: 7 + i,
                    passed: 4,
                    failed: 2 + i,
                    skipped: 1,
                    flaky: 1 + i,
                    quarantined_failures: i,
                  }
                : null,
          }));
          cases.push({ id: await execution(specs, { started }), specs, started });
        }
      }
    }
    expect(cases.length).toBe(2 * (1 + 6 + 21 + 56));
    for (const { id, specs, started } of cases) {
      const settled = await settleExecution(database.dialect, id, at).execute(database.db);
      const status = executionStatus(tally(specs), started);
      const final = ["passed", "failed", "errored", "cancelled"].includes(status);
      const row = await executionRow(id);
      const what = `${specs.map((s) => s.status).join(",") || "no runs"}, started ${started}`;
      expect(settled.rows[0]?.status, what).toBe(status);
      expect(row.status, what).toBe(status);
      expect(JSON.parse(row.summary), what).toEqual(addSummaries(specs.map((s) => s.summary ?? null)));
      expect(row.started_at, what).toBe(status === "queued" ? null : at);
      expect(row.finished_at, what).toBe(final ? at : null);
    }
  });

  it("leaves an execution that ended as it ended", async () => {
    const id = await execution([{ status: "passed" }], { started: true });
    await settleExecution(database.dialect, id, at).execute(database.db);
    await database.db
      .updateTable("device_runs")
      .set({ status: "queued" })
      .where("execution_id", "=", id)
      .execute();
    const again = await settleExecution(database.dialect, id, "2026-11-24T13:00:00.000Z").execute(
      database.db,
    );
    expect(again.rows).toEqual([]);
    expect(await executionRow(id)).toMatchObject({ status: "passed", finished_at: at });
  });
});

const host = { organizationId: org, agentId: "ag_1", devices: [], host: true, stepTypes: ["inspect"] };

async function drain(): Promise<void> {
  for (;;) {
    const run = await runs.claim(host, Date.parse(at), 60_000);
    if (!run) return;
    await runs.complete(org, run.leaseId, "passed", null, Date.parse(at));
  }
}

describe("the lifecycle", () => {
  it("ends an execution passed when its runs end at the same moment, each completion counting the other", async () => {
    await drain();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await execution([{ status: "queued" }, { status: "queued" }]));
    const claimed = await Promise.all(
      ids.flatMap(() => [0, 1]).map(() => runs.claim(host, Date.parse(at), 60_000)),
    );
    expect(new Set(claimed.map((run) => run?.deviceRunId)).size).toBe(20);
    const completions = await Promise.all(
      claimed.map((run) => runs.complete(org, run?.leaseId ?? "", "passed", null, Date.parse(at))),
    );
    expect(completions.every((done) => done?.status === "passed" && !done.requeued)).toBe(true);
    for (const id of ids) expect((await executionRow(id)).status).toBe("passed");
    // Of each execution's two completions, the one that ended it says so.
    for (const id of ids) {
      const mine = completions
        .filter((done) => done?.executionId === id)
        .map((done) => done?.executionStatus);
      expect(mine).toContain("passed");
    }
  });

  it("appends execution.started once at the first claim and execution.finished once when it ends, also racing", async () => {
    await drain();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await execution([{ status: "queued" }, { status: "queued" }]));
    const cancelled = await execution([{ status: "queued" }, { status: "queued" }]);
    const claimed = await Promise.all(
      ids.flatMap(() => [0, 1]).map(() => runs.claim(host, Date.parse(at), 60_000)),
    );
    const started = await eventsOf(database.db, org, { type: "execution.started" });
    for (const id of ids) {
      expect(started.filter((event) => event.subjectId === id).map((event) => event.data)).toEqual([
        { execution_id: id, status: "running" },
      ]);
    }
    await Promise.all(
      claimed.map((run, i) =>
        runs.complete(org, run?.leaseId ?? "", i % 4 === 0 ? "failed" : "passed", null, Date.parse(at)),
      ),
    );
    await runs.cancel(org, cancelled, at);
    const finished = await eventsOf(database.db, org, { type: "execution.finished" });
    for (const id of [...ids, cancelled]) {
      const mine = finished.filter((event) => event.subjectId === id);
      expect(mine).toHaveLength(1);
      expect(mine[0]?.data).toEqual({ execution_id: id, status: (await executionRow(id)).status });
    }
    // A cancelled execution never started: no execution.started for it.
    expect(started.some((event) => event.subjectId === cancelled)).toBe(false);
  });

  it("counts a completion once: a second complete of the lease finds it ended", async () => {
    await drain();
    const id = await execution([{ status: "queued" }]);
    const run = await runs.claim(host, Date.parse(at), 60_000);
    expect(run?.executionId).toBe(id);
    const [first, second] = await Promise.all([
      runs.complete(org, run?.leaseId ?? "", "failed", null, Date.parse(at)),
      runs.complete(org, run?.leaseId ?? "", "passed", null, Date.parse(at)),
    ]);
    expect([first, second].filter((done) => done !== undefined)).toHaveLength(1);
    expect((await executionRow(id)).status).toBe((first ?? second)?.status);
  });

  it("does not write an end read before its execution changed, so the caller reads again", async () => {
    await drain();
    const id = await execution([{ status: "queued" }, { status: "queued" }]);
    const run = await runs.claim(host, Date.parse(at), 60_000);
    const held = await readHeld(database.db, database.dialect, {
      leaseId: run?.leaseId ?? "",
      withReports: true,
    });
    if (!held) throw new Error("the claimed run is not held");
    // Anything that writes the execution row: here a cancel.
    await runs.cancel(org, id, at);
    const { writeEnd } = await import("./end-attempt-query.ts");
    const summary = { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 };
    const written = await writeEnd(
      database.db,
      database.dialect,
      held,
      { status: "failed", requeued: true },
      null,
      summary,
      at,
      true,
    );
    // PostgreSQL checks the execution's version; SQLite ends attempts only inside a transaction, where no other
    // writer can come in between, so it has nothing to check.
    if (database.dialect === "postgres") expect(written).toEqual({ written: false, changed: true });
    else expect(written.written).toBe(true);
    // The completion itself reads again and sees the cancel.
    if (database.dialect === "postgres") {
      const done = await runs.complete(org, run?.leaseId ?? "", "failed", null, Date.parse(at));
      expect(done).toMatchObject({ status: "cancelled", requeued: false, executionStatus: "cancelled" });
    }
    const row = await executionRow(id);
    expect(row.status).toBe(database.dialect === "postgres" ? "cancelled" : "running");
  });

  it("counts distinct tests and flaky ones per device run when an attempt ends", async () => {
    await drain();
    const id = await execution([{ status: "queued" }]);
    await database.db
      .updateTable("device_runs")
      .set({ max_attempts: 2 })
      .where("execution_id", "=", id)
      .execute();
    const report = async (lease: string, cases: Array<[string, "passed" | "failed" | "errored"]>) => {
      const run = await runs.current(org, lease);
      if (!run) throw new Error("not held");
      await database.db
        .insertInto("test_cases")
        .values(
          cases.map(([name, status], seq) => ({
            device_run_id: run.deviceRunId,
            attempt: run.attempt,
            seq,
            step_index: 0,
            classname: "com.example.T",
            name,
            status,
            duration_ms: 1,
            message: null,
            details: null,
            artifacts: null,
            video_offset_ms: null,
          })),
        )
        .execute();
    };
    const first = await runs.claim(host, Date.parse(at), 60_000);
    // a fails then passes within the attempt (flaky); b passes then fails (a failure, not flaky).
    await report(first?.leaseId ?? "", [
      ["a", "failed"],
      ["b", "passed"],
      ["a", "passed"],
      ["b", "failed"],
    ]);
    const ended = await runs.complete(org, first?.leaseId ?? "", "passed", null, Date.parse(at));
    expect(ended).toMatchObject({ status: "failed", requeued: true, executionStatus: "running" });
    const afterFirst = JSON.parse((await executionRow(id)).summary);
    expect(afterFirst).toEqual({
      tests: 2,
      passed: 1,
      failed: 1,
      skipped: 0,
      flaky: 1,
      quarantined_failures: 0,
    });

    const second = await runs.claim(host, Date.parse(at), 60_000);
    expect(second?.attempt).toBe(2);
    await report(second?.leaseId ?? "", [
      ["b", "errored"],
      ["b", "passed"],
    ]);
    const done = await runs.complete(org, second?.leaseId ?? "", "passed", null, Date.parse(at));
    expect(done).toMatchObject({ status: "passed", requeued: false, executionStatus: "passed" });
    // a did not come back on attempt 2: the run's summary is attempt 2's.
    expect(JSON.parse((await executionRow(id)).summary)).toEqual({
      tests: 1,
      passed: 1,
      failed: 0,
      skipped: 0,
      flaky: 1,
      quarantined_failures: 0,
    });
    const { summary } = await sql<{ summary: string }>`select summary from device_run_attempts
      where device_run_id = ${`${id}_dr0`} and attempt = 1`
      .execute(database.db)
      .then((result) => result.rows[0] ?? { summary: "null" });
    expect(JSON.parse(summary)).toEqual(afterFirst);
  });
});
