import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

// Execution logs as agents report them (POST …/events) and as people read them (GET …/log): stored in the blob
// store in chunks, streamed back, capped per execution; agent text the databases cannot hold kept escaped.

interface Setup {
  server: TestServer;
  ci: Record<string, string>;
  agent: Record<string, string>;
}

async function setUp(env: Record<string, string> = {}): Promise<Setup> {
  const server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000", ...env },
  });
  const ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
  return { server, ci, agent };
}

/** A queued execution of a one-step plan, claimed: its id and the lease to report on. */
async function claimedRun({ server, ci, agent }: Setup): Promise<{ executionId: string; lease: string }> {
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "logs",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  expect(plan.status).toBe(201);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  const claim = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "logger", devices: [] },
  });
  expect(claim.body.job.execution_id).toBe(run.body.execution.id);
  return { executionId: run.body.execution.id, lease: claim.body.job.lease_id };
}

const at = "2026-11-23T10:00:00.000Z";
const logLine = (seq: number, line: string, stream = "stdout") => ({ seq, type: "log", at, stream, line });

async function post({ server, agent }: Setup, lease: string, events: unknown[]) {
  const response = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

async function logOf({ server, ci }: Setup, executionId: string): Promise<string> {
  const response = await fetch(`${server.baseUrl}/executions/${executionId}/log`, { headers: ci });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  return response.text();
}

describe("execution logs", () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp();
  });
  afterAll(() => setup.server.close());

  it("reads back the lines in order, with a header per attempt, as before logs moved to the blob store", async () => {
    const { executionId, lease } = await claimedRun(setup);
    await post(setup, lease, [
      logLine(0, "first"),
      { seq: 1, type: "step_started", at, step_index: 0 },
      logLine(2, "second", "stderr"),
    ]);
    // Out of order within a batch, and an empty line: kept as reported, read in seq order.
    await post(setup, lease, [logLine(5, "fifth"), logLine(4, ""), logLine(3, "third", "agent")]);
    expect(await logOf(setup, executionId)).toBe(
      [
        "=== device 1, attempt 1 ===",
        `${at} [stdout] first`,
        `${at} [stderr] second`,
        `${at} [agent] third`,
        `${at} [stdout] `,
        `${at} [stdout] fifth`,
        "",
      ].join("\n"),
    );
  });

  it("stores a resent batch once, also when the resend carries newer lines too", async () => {
    const { executionId, lease } = await claimedRun(setup);
    const batch = [logLine(0, "a"), logLine(1, "b"), logLine(2, "c")];
    await post(setup, lease, batch);
    // The answer was lost: the agent sends the batch again, and the same again with what it queued since.
    await post(setup, lease, batch);
    await post(setup, lease, [...batch, logLine(3, "d"), logLine(4, "e")]);
    await post(setup, lease, [logLine(4, "e"), logLine(5, "f")]);
    const lines = (await logOf(setup, executionId)).trimEnd().split("\n").slice(1);
    expect(lines.map((line) => line.slice(line.lastIndexOf(" ") + 1))).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
      "f",
    ]);
  });

  it("keeps every line and test case holding U+0000 or lone surrogates, escaped", async () => {
    const { executionId, lease } = await claimedRun(setup);
    await post(setup, lease, [
      { seq: 0, type: "step_started", at, step_index: 0 },
      logLine(1, "bin\0ary"),
      logLine(2, "lone \ud800 high, lone \udc00 low, a pair \ud83d\ude00 kept"),
      {
        seq: 3,
        type: "test_case",
        step_index: 0,
        classname: "com.example.\udfffTest",
        name: "handles\0nul",
        status: "failed",
        message: "expected \0 got \ud801",
        details: "at Test.handles\0nul(Test.kt:1)",
        duration_ms: 5,
      },
      {
        seq: 4,
        type: "test_case",
        step_index: 0,
        classname: "com.example.Test",
        name: "plain",
        status: "passed",
      },
      logLine(5, "after the tests"),
      { seq: 6, type: "step_finished", at, step_index: 0, status: "failed", message: "exit\0 1" },
    ]);
    const done = await call(`${setup.server.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: setup.agent,
      json: { status: "failed" },
    });
    expect(done.status).toBe(200);

    const view = (await call(`${setup.server.baseUrl}/executions/${executionId}`, { headers: setup.ci }))
      .body;
    expect(view).toMatchObject({
      status: "failed",
      summary: { tests: 2, passed: 1, failed: 1 },
      devices: [{ steps: [{ status: "failed", message: "exit\\u0000 1" }] }],
    });
    const log = await logOf(setup, executionId);
    expect(log).toContain(`${at} [stdout] bin\\u0000ary\n`);
    expect(log).toContain(`${at} [stdout] lone \\ud800 high, lone \\udc00 low, a pair 😀 kept\n`);
    expect(log).toContain(`${at} [stdout] after the tests\n`);
    const junit = await (
      await fetch(`${setup.server.baseUrl}/executions/${executionId}/junit`, { headers: setup.ci })
    ).text();
    expect(junit).toContain('classname="com.example.\\udfffTest" name="handles\\u0000nul"');
    expect(junit).toContain('message="expected \\u0000 got \\ud801"');
    expect(junit).toContain("at Test.handles\\u0000nul(Test.kt:1)");
    expect(junit).toContain('name="plain"');
  });

  it("keeps step output out of the database: its lines are in the blob store, indexed", async () => {
    const { executionId, lease } = await claimedRun(setup);
    const line = "x".repeat(4000);
    await post(
      setup,
      lease,
      Array.from({ length: 100 }, (_, seq) => logLine(seq, line)),
    );
    const { db } = setup.server.app.services.database;
    const chunks = await db
      .selectFrom("log_chunks")
      .select(["bytes", "lines", "first_seq", "last_seq"])
      .where("execution_id", "=", executionId)
      .execute();
    expect(chunks.map((c) => ({ ...c, bytes: Number(c.bytes) }))).toEqual([
      { bytes: 100 * (at.length + " [stdout] ".length + 4000 + 1), lines: 100, first_seq: 0, last_seq: 99 },
    ]);
    const legacy = await db.selectFrom("log_lines").select("seq").execute();
    expect(legacy).toEqual([]);
    expect((await logOf(setup, executionId)).length).toBe(
      "=== device 1, attempt 1 ===\n".length + Number(chunks[0]?.bytes),
    );
  });

  it("moves log lines stored in the database before the upgrade into the blob store at start", async () => {
    const { executionId, lease } = await claimedRun(setup);
    await post(setup, lease, [logLine(0, "new")]);
    const { db } = setup.server.app.services.database;
    const run = await db
      .selectFrom("device_runs")
      .select("id")
      .where("execution_id", "=", executionId)
      .executeTakeFirstOrThrow();
    // As the server wrote them before: one row per line (some overlap what is already in a chunk).
    await db
      .insertInto("log_lines")
      .values(
        Array.from({ length: 1500 }, (_, seq) => ({
          device_run_id: run.id,
          attempt: 1,
          seq,
          at,
          stream: "stdout",
          line: seq === 0 ? "new" : `old ${seq}`,
        })),
      )
      .execute();
    // The same database and blob store (S3 in the scaled configuration), as after an upgrade's restart.
    const restarted = await startTestServer({
      shareWith: setup.server,
      env: { TESTBAY_STORAGE_URL: setup.server.config.storageUrl },
    });
    try {
      expect(await db.selectFrom("log_lines").select("seq").execute()).toEqual([]);
      const lines = (await logOf({ ...setup, server: restarted }, executionId)).trimEnd().split("\n");
      expect(lines).toHaveLength(1 + 1500);
      expect(lines[1]).toBe(`${at} [stdout] new`);
      expect(lines[1500]).toBe(`${at} [stdout] old 1499`);
    } finally {
      await restarted.close();
    }
  });

  it("streams a log of 200 chunks, over several pages of its index, to three readers at once, each line in order", async () => {
    // Built through the API as an agent sends it: 200 batches of 100 lines, one chunk each, so that a reader
    // walks the chunk index a page at a time (log-store.ts, indexPageSize). How the server answers others while
    // a 64 MiB log streams is measured by `npm run bench -- logs`, not asserted here.
    const { executionId, lease } = await claimedRun(setup);
    const batches = 200;
    const perBatch = 100;
    const lineText = (seq: number) => `${"y".repeat(110)}${seq}`;
    for (let b = 0; b < batches; b++) {
      await post(
        setup,
        lease,
        Array.from({ length: perBatch }, (_, i) => logLine(b * perBatch + i, lineText(b * perBatch + i))),
      );
    }
    const expected = `=== device 1, attempt 1 ===\n${Array.from({ length: batches * perBatch }, (_, seq) => `${at} [stdout] ${lineText(seq)}\n`).join("")}`;
    const texts = await Promise.all([1, 2, 3].map(() => logOf(setup, executionId)));
    for (const text of texts) {
      expect(text.length).toBe(expected.length);
      expect(text === expected).toBe(true);
    }
  });
});

describe("the per-execution log cap", () => {
  const cap = 2000;
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp({ TESTBAY_MAX_EXECUTION_LOG_BYTES: String(cap) });
  });
  afterAll(() => setup.server.close());

  it("drops lines past TESTBAY_MAX_EXECUTION_LOG_BYTES after one marker line saying so", async () => {
    const { executionId, lease } = await claimedRun(setup);
    const line = (seq: number) => logLine(seq, `${String(seq).padStart(3, "0")} ${"z".repeat(60)}`);
    await post(
      setup,
      lease,
      Array.from({ length: 20 }, (_, seq) => line(seq)),
    );
    await post(
      setup,
      lease,
      Array.from({ length: 20 }, (_, i) => line(20 + i)),
    );
    // Later batches, even test cases in them, are still accepted: only the log lines are dropped.
    await post(setup, lease, [
      line(40),
      { seq: 41, type: "test_case", step_index: 0, classname: "C", name: "t", status: "passed" },
    ]);
    const log = await logOf(setup, executionId);
    const lines = log.trimEnd().split("\n");
    const marker = `${at} [agent] [testbay] log truncated at ${cap} bytes (TESTBAY_MAX_EXECUTION_LOG_BYTES): later lines were dropped`;
    expect(lines.filter((l) => l.includes("log truncated"))).toEqual([marker]);
    expect(lines.at(-1)).toBe(marker);
    const kept = lines.slice(1, -1);
    // Every kept line fits under the cap, in order, and the next one would not have.
    const lineBytes = `${at} [stdout] 000 ${"z".repeat(60)}\n`.length;
    expect(kept).toHaveLength(Math.floor(cap / lineBytes));
    expect(kept.map((l) => l.split(" ")[2])).toEqual(
      Array.from({ length: kept.length }, (_, i) => String(i).padStart(3, "0")),
    );
    const done = await call(`${setup.server.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: setup.agent,
      json: { status: "passed" },
    });
    expect(done.body.status).toBe("passed");
    const view = (await call(`${setup.server.baseUrl}/executions/${executionId}`, { headers: setup.ci }))
      .body;
    expect(view.summary.tests).toBe(1);
  });
});
