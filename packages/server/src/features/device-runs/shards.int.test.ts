// The sharding protocol over HTTP (issue 15's shared design): agents of a plan's shards list a step's tests,
// take batches with next-batch, report them as test_case events and complete; the server plans, hands out,
// hands back and counts. No devices: each "agent" here is this test speaking the agent protocol.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

const ttlSeconds = 60;

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

const target = { package_name: "com.example.basic", version: "1.2.3" };
const flow = "appId: com.example.basic\n---\n- launchApp\n";
const device = (serial: string) => ({ serial, platform: "android", model: "Pixel 7", os_version: "14" });

interface Test {
  classname: string;
  name: string;
}
interface Job {
  lease_id: string;
  execution_id: string;
  device_run: { id: string; position: number; attempt: number; shard: number; shard_count: number };
}

const tests = (count: number, prefix = "t"): Test[] =>
  Array.from({ length: count }, (_, i) => ({
    classname: "com.example.LoginTest",
    name: `${prefix}${String(i).padStart(3, "0")}`,
  }));
const key = (test: Test) => `${test.classname}#${test.name}`;

async function createPlan(step: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `sharded ${JSON.stringify(step)}`,
      package_name: "com.example.basic",
      devices: [{ platform: "android" }],
      steps: [{ type: "maestro", flows: [flow], ...step }],
      ...extra,
    },
  });
  expect(response.status).toBe(201);
  return response.body.id as string;
}

async function trigger(planId: string): Promise<string> {
  const response = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, ...target },
  });
  expect(response.status).toBe(200);
  return response.body.execution.id;
}

async function claim(serial: string): Promise<Job | undefined> {
  const response = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: `agent-${serial}`, devices: [device(serial)], step_types: ["inspect", "maestro"] },
  });
  if (response.status === 204) return undefined;
  expect(response.status).toBe(200);
  return response.body.job;
}

/** Claims one job per device, all of one execution (the queue is drained before each test). */
async function claimShards(count: number): Promise<Job[]> {
  const jobs: Job[] = [];
  for (let i = 0; i < count; i++) {
    const job = await claim(`emulator-${5554 + 2 * i}`);
    expect(job).toBeDefined();
    jobs.push(job as Job);
  }
  return jobs;
}

const listTests = (lease: string, list: Test[], step = 0) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/steps/${step}/tests`, {
    headers: agent,
    json: { tests: list },
  });
const nextBatch = (lease: string, finished?: string, step = 0) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/steps/${step}/next-batch`, {
    headers: agent,
    json: finished === undefined ? {} : { finished_batch_id: finished },
  });
/** next-batch with take: false: the agent stops taking batches and only finishes `finished`. */
const finishOnly = (lease: string, finished?: string, step = 0) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/steps/${step}/next-batch`, {
    headers: agent,
    json: { ...(finished === undefined ? {} : { finished_batch_id: finished }), take: false },
  });
const complete = (lease: string, json: Record<string, unknown>) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/complete`, { headers: agent, json });
const heartbeat = (lease: string) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/heartbeat`, { method: "POST", headers: agent });
const execution = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
const executionTests = async (id: string) =>
  (await call(`${server.baseUrl}/executions/${id}/tests?limit=500`, { headers: ci })).body.items as Array<
    Test & { shard: number; status: string }
  >;

/** Per lease, the next event seq (unique within a lease). */
const seqs = new Map<string, number>();
async function report(lease: string, list: Test[], durationMs: (test: Test) => number = () => 1000) {
  const events = list.map((test) => {
    const seq = seqs.get(lease) ?? 0;
    seqs.set(lease, seq + 1);
    return {
      seq,
      type: "test_case",
      step_index: 0,
      ...test,
      status: "passed",
      duration_ms: durationMs(test),
    };
  });
  const response = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(response.status).toBe(200);
}

/**
 * Each shard in turn asks for a batch, runs (reports) it, and asks again with its id, until every shard got
 * null. Returns the batches each shard ran, in order.
 */
async function runAll(
  jobs: readonly Job[],
  durationMs?: (test: Test) => number,
): Promise<Map<string, Array<{ id: string; tests: Test[] }>>> {
  const ran = new Map<string, Array<{ id: string; tests: Test[] }>>(jobs.map((job) => [job.lease_id, []]));
  const finished = new Map<string, string | undefined>();
  const open = new Set(jobs.map((job) => job.lease_id));
  while (open.size > 0) {
    for (const lease of [...open]) {
      const response = await nextBatch(lease, finished.get(lease));
      expect(response.status).toBe(200);
      const batch = response.body.batch as { id: string; tests: Test[] } | null;
      if (batch === null) {
        open.delete(lease);
        continue;
      }
      await report(lease, batch.tests, durationMs);
      ran.get(lease)?.push(batch);
      finished.set(lease, batch.id);
    }
  }
  return ran;
}

/** The states of the batches a lease holds (running) or ran (done), by id, as stored. */
async function batchStates(lease: string): Promise<Record<string, string>> {
  const rows = await server.app.services.database.db
    .selectFrom("test_batches")
    .select(["id", "state"])
    .where("lease_id", "=", lease)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.id, row.state]));
}

async function statesOf(ids: string[]): Promise<Record<string, string>> {
  const rows = await server.app.services.database.db
    .selectFrom("test_batches")
    .select(["id", "state", "lease_id"])
    .where("id", "in", ids)
    .execute();
  for (const row of rows) if (row.state === "queued") expect(row.lease_id).toBeNull();
  return Object.fromEntries(rows.map((row) => [row.id, row.state]));
}

/** Claims until nothing is left (cancelling what it gets), so each test starts with an empty queue. */
async function drainQueue() {
  for (let i = 0; i < 200; i++) {
    const job = await claim(`drain-${i}`);
    if (!job) return;
    await complete(job.lease_id, { status: "cancelled" });
  }
}

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
      TESTBAY_LEASE_TTL_SECONDS: String(ttlSeconds),
    },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

describe("a sharded plan's device runs", () => {
  it("are one per shard of the entry, each job saying which shard it is", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 3 }));
    const jobs = await claimShards(3);
    expect(jobs.map((job) => job.execution_id)).toEqual([executionId, executionId, executionId]);
    expect(jobs.map((job) => [job.device_run.shard, job.device_run.shard_count]).sort()).toEqual([
      [0, 3],
      [1, 3],
      [2, 3],
    ]);
    expect(new Set(jobs.map((job) => job.device_run.position))).toEqual(new Set([0]));
    expect(await claim("emulator-9999")).toBeUndefined();
    for (const job of jobs) await complete(job.lease_id, { status: "passed" });
    const done = await execution(executionId);
    expect(done.status).toBe("passed");
    expect(done.devices.map((run: { shard: number }) => run.shard)).toEqual([0, 1, 2]);
  });

  it("need only the step types that run on their shard: shell steps run on shard 0 only", async () => {
    await drainQueue();
    const planId = await createPlan(
      {},
      {
        steps: [
          { type: "shell", run: "true" },
          { type: "maestro", flows: [flow], shards: 2 },
        ],
      },
    );
    const executionId = await trigger(planId);
    // An agent without shell steps allowed takes shard 1, not shard 0.
    const [job] = await claimShards(1);
    expect(job?.device_run.shard).toBe(1);
    expect(await claim("emulator-9999")).toBeUndefined();
    const withShell = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "shell", devices: [device("emulator-9998")], step_types: ["shell", "maestro"] },
    });
    expect(withShell.body.job.device_run).toMatchObject({ shard: 0, shard_count: 2 });
    expect(withShell.body.job.execution_id).toBe(executionId);
    for (const lease of [job?.lease_id, withShell.body.job.lease_id]) {
      await complete(lease ?? "", { status: "passed" });
    }
  });

  it("are one for a plan without shards: shard 0 of 1", async () => {
    await drainQueue();
    await trigger(await createPlan({}));
    const [job] = await claimShards(1);
    expect(job?.device_run).toMatchObject({ shard: 0, shard_count: 1 });
    expect(await claim("emulator-9999")).toBeUndefined();
    await complete(job?.lease_id ?? "", { status: "passed" });
  });
});

describe("duration sharding over three shards", () => {
  it("hands out disjoint batches whose union is the listed set, and counts each test once", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 3 }));
    const jobs = await claimShards(3);
    const listed = tests(40);
    // Each shard lists the same tests, in its own order (as each device's runner might), all at once.
    const answers = (
      await Promise.all(
        jobs.map((job, i) => listTests(job.lease_id, i === 1 ? [...listed].reverse() : listed)),
      )
    ).map((response) => response.body);
    expect(answers.filter((answer) => answer.planned)).toHaveLength(1);
    for (const answer of answers) {
      expect(answer).toMatchObject({ differs: false, tests: 40, sharding: "duration" });
      expect(answer.batches).toBe(answers[0].batches);
    }

    const ran = await runAll(jobs);
    const all = [...ran.values()].flat().flatMap((batch) => batch.tests.map(key));
    expect(all).toHaveLength(40);
    expect(new Set(all)).toEqual(new Set(listed.map(key)));
    for (const job of jobs) expect(ran.get(job.lease_id)?.length).toBeGreaterThan(0);

    for (const job of jobs) {
      expect((await complete(job.lease_id, { status: "passed" })).body.status).toBe("passed");
    }
    const done = await execution(executionId);
    expect(done).toMatchObject({ status: "passed", summary: { tests: 40, passed: 40, failed: 0 } });
    // Each test is listed once, under the shard that ran it.
    const items = await executionTests(executionId);
    expect(items).toHaveLength(40);
    const shardOf = new Map(jobs.map((job) => [job.lease_id, job.device_run.shard]));
    for (const [lease, batches] of ran) {
      for (const test of batches.flatMap((batch) => batch.tests)) {
        expect(items.find((item) => key(item) === key(test))?.shard).toBe(shardOf.get(lease));
      }
    }
  });

  it("never hands one batch to two shards asking at the same moment", async () => {
    await drainQueue();
    await trigger(await createPlan({ shards: 6 }));
    const jobs = await claimShards(6);
    const listed = tests(120);
    await listTests(jobs[0]?.lease_id ?? "", listed);
    const handedOut: string[] = [];
    const finished = new Map<string, string>();
    const open = new Set(jobs.map((job) => job.lease_id));
    while (open.size > 0) {
      // Every shard still taking asks at once.
      const answers = await Promise.all(
        [...open].map(async (lease) => ({ lease, response: await nextBatch(lease, finished.get(lease)) })),
      );
      for (const { lease, response } of answers) {
        expect(response.status).toBe(200);
        const batch = response.body.batch as { id: string; tests: Test[] } | null;
        if (batch === null) open.delete(lease);
        else {
          handedOut.push(...batch.tests.map(key));
          finished.set(lease, batch.id);
        }
      }
    }
    expect(handedOut).toHaveLength(120);
    expect(new Set(handedOut)).toEqual(new Set(listed.map(key)));
    for (const job of jobs) await complete(job.lease_id, { status: "cancelled" });
  });

  it("answers a differing later listing from the plan, which stands", async () => {
    await drainQueue();
    await trigger(await createPlan({ shards: 2 }));
    const [first, second] = await claimShards(2);
    const listed = tests(6);
    expect((await listTests(first?.lease_id ?? "", listed)).body).toMatchObject({ planned: true, tests: 6 });
    const other = [...listed.slice(1), ...tests(2, "extra")];
    const later = await listTests(second?.lease_id ?? "", other);
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({ planned: false, differs: true, tests: 6 });
    expect(server.logs.some((line) => line.includes("the plan stands"))).toBe(true);
    const ran = await runAll([first, second] as Job[]);
    const all = [...ran.values()].flat().flatMap((batch) => batch.tests.map(key));
    expect(new Set(all)).toEqual(new Set(listed.map(key)));
    expect(all).toHaveLength(6);
    for (const job of [first, second]) await complete(job?.lease_id ?? "", { status: "passed" });
  });

  it("puts the tests slowest in the plan's history first", async () => {
    await drainQueue();
    const planId = await createPlan({ shards: 2 });
    const listed = tests(8);
    const slow = listed[7] as Test;
    const durations = (test: Test) => (key(test) === key(slow) ? 90_000 : 1_000);

    // A first execution: no history yet, so every test is expected to take 15 s and keeps its listed order.
    const firstExecution = await trigger(planId);
    const firstJobs = await claimShards(2);
    await listTests(firstJobs[0]?.lease_id ?? "", listed);
    const firstBatch = (await nextBatch(firstJobs[0]?.lease_id ?? "")).body.batch;
    expect(firstBatch.tests[0]).toEqual(listed[0]);
    await report(firstJobs[0]?.lease_id ?? "", firstBatch.tests, durations);
    await nextBatch(firstJobs[0]?.lease_id ?? "", firstBatch.id);
    await runAll(firstJobs, durations);
    for (const job of firstJobs) await complete(job.lease_id, { status: "passed" });
    expect((await execution(firstExecution)).status).toBe("passed");

    // The next one knows: the 90 s test comes first, alone, and the rest after it.
    await trigger(planId);
    const jobs = await claimShards(2);
    await listTests(jobs[0]?.lease_id ?? "", listed);
    const batch = (await nextBatch(jobs[0]?.lease_id ?? "")).body.batch;
    expect(batch.tests).toEqual([slow]);
    await report(jobs[0]?.lease_id ?? "", batch.tests);
    // Done with it; the batch this takes is handed out again to runAll (the lease holds it unfinished).
    await nextBatch(jobs[0]?.lease_id ?? "", batch.id);
    const rest = await runAll(jobs);
    expect(
      [...rest.values()]
        .flat()
        .flatMap((b) => b.tests)
        .map(key),
    ).not.toContain(key(slow));
    for (const job of jobs) await complete(job.lease_id, { status: "passed" });
  });
});

describe("a large listing", () => {
  it("takes 20,000 tests (a body over the 1 MiB other JSON routes take) and plans every one once", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 3 }));
    const [job, ...others] = await claimShards(3);
    const listed = Array.from({ length: 20_000 }, (_, i) => ({
      classname: `com.example.feature${i % 50}.SomeRatherLongTestClassName`,
      name: `test_${i}_does_what_its_long_descriptive_name_says`,
    }));
    expect(JSON.stringify({ tests: listed }).length).toBeGreaterThan(1024 * 1024);
    const answer = await listTests(job?.lease_id ?? "", listed);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ planned: true, tests: 20_000 });
    const rows = await server.app.services.database.db
      .selectFrom("test_batches")
      .select("tests")
      .where("execution_id", "=", executionId)
      .execute();
    expect(rows).toHaveLength(answer.body.batches);
    const planned = rows.flatMap((row) => (JSON.parse(row.tests) as Test[]).map(key));
    expect(planned).toHaveLength(20_000);
    expect(new Set(planned).size).toBe(20_000);
    for (const other of [job, ...others]) await complete(other?.lease_id ?? "", { status: "cancelled" });
  });
});

describe("uniform sharding", () => {
  it("gives each shard one fixed list, contiguous and of equal count", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 3, sharding: "uniform" }));
    const jobs = (await claimShards(3)).sort((a, b) => a.device_run.shard - b.device_run.shard);
    const listed = tests(10);
    for (const job of jobs) {
      expect((await listTests(job.lease_id, listed)).body).toMatchObject({ sharding: "uniform", batches: 3 });
    }
    const ran = await runAll(jobs);
    expect(jobs.map((job) => ran.get(job.lease_id)?.map((batch) => batch.tests))).toEqual([
      [listed.slice(0, 4)],
      [listed.slice(4, 7)],
      [listed.slice(7, 10)],
    ]);
    for (const job of jobs) await complete(job.lease_id, { status: "passed" });
    expect((await execution(executionId)).summary).toMatchObject({ tests: 10, passed: 10 });
  });
});

describe("a shard that loses its device or its lease mid-batch", () => {
  it("hands its batch back on a device_lost hand-back; another shard runs it, and the lost shard's next attempt finishes with none", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 2 }));
    const [lost, other] = (await claimShards(2)) as [Job, Job];
    const listed = tests(12);
    await listTests(lost.lease_id, listed);
    await listTests(other.lease_id, listed);
    // One batch run and reported, half of the next, then the device went away.
    const finished = (await nextBatch(lost.lease_id)).body.batch as { id: string; tests: Test[] };
    await report(lost.lease_id, finished.tests);
    const held = (await nextBatch(lost.lease_id, finished.id)).body.batch as { id: string; tests: Test[] };
    await report(lost.lease_id, held.tests.slice(0, Math.ceil(held.tests.length / 2)));
    expect(await batchStates(lost.lease_id)).toEqual({ [finished.id]: "done", [held.id]: "running" });
    const handedBack = await complete(lost.lease_id, { status: "errored", reason: "device_lost" });
    expect(handedBack.body).toMatchObject({ requeued: true });
    // Both back in the queue: the re-queued attempt's results are history, so its finished batch runs again.
    expect(await batchStates(lost.lease_id)).toEqual({});
    expect(await statesOf([finished.id, held.id])).toEqual({ [finished.id]: "queued", [held.id]: "queued" });

    const ran = await runAll([other]);
    const otherTests = ran
      .get(other.lease_id)
      ?.flatMap((batch) => batch.tests)
      .map(key);
    // The queue's order: the lost shard's batches were its first two.
    expect(
      ran
        .get(other.lease_id)
        ?.slice(0, 2)
        .map((batch) => batch.id),
    ).toEqual([finished.id, held.id]);
    expect(otherTests).toHaveLength(12);
    expect(new Set(otherTests)).toEqual(new Set(listed.map(key)));
    expect((await complete(other.lease_id, { status: "passed" })).body.status).toBe("passed");

    // The lost run's next attempt, on another device, comes after the queue emptied: nothing is left for it.
    const again = (await claim("emulator-7000")) as Job;
    expect(again.device_run).toMatchObject({
      id: lost.device_run.id,
      attempt: 2,
      shard: lost.device_run.shard,
    });
    expect((await listTests(again.lease_id, listed)).body).toMatchObject({ planned: false });
    expect((await nextBatch(again.lease_id)).body).toEqual({ batch: null });
    expect((await complete(again.lease_id, { status: "passed" })).body).toMatchObject({
      status: "passed",
      execution_status: "passed",
    });
    const done = await execution(executionId);
    expect(done.summary).toMatchObject({ tests: 12, passed: 12 });
    const items = await executionTests(executionId);
    expect(items).toHaveLength(12);
    expect(new Set(items.map((item) => item.shard))).toEqual(new Set([other.device_run.shard]));
  });

  it("hands its batch back when its lease lapses; a shard still running takes it", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 2 }, { max_attempts: 2 }));
    const [lapsing, alive] = (await claimShards(2)) as [Job, Job];
    const listed = tests(12);
    await listTests(lapsing.lease_id, listed);
    const held = (await nextBatch(lapsing.lease_id)).body.batch as { id: string; tests: Test[] };
    await report(lapsing.lease_id, held.tests.slice(0, 1));

    // The other shard keeps heartbeating; the lapsing one stops.
    server.clock.advance(ttlSeconds * 600);
    expect((await heartbeat(alive.lease_id)).status).toBe(200);
    server.clock.advance(ttlSeconds * 600);
    await server.app.services.agents.sweep();
    expect((await heartbeat(lapsing.lease_id)).status).toBe(409);
    expect(await statesOf([held.id])).toEqual({ [held.id]: "queued" });
    expect((await nextBatch(lapsing.lease_id)).status).toBe(409);

    const ran = await runAll([alive]);
    expect(ran.get(alive.lease_id)?.[0]?.id).toBe(held.id);
    const all = ran
      .get(alive.lease_id)
      ?.flatMap((batch) => batch.tests)
      .map(key);
    expect(all).toHaveLength(12);
    expect(new Set(all)).toEqual(new Set(listed.map(key)));
    await complete(alive.lease_id, { status: "passed" });

    const again = (await claim("emulator-7002")) as Job;
    expect(again.device_run).toMatchObject({ id: lapsing.device_run.id, attempt: 2 });
    await listTests(again.lease_id, listed);
    expect((await nextBatch(again.lease_id)).body).toEqual({ batch: null });
    await complete(again.lease_id, { status: "passed" });
    expect((await execution(executionId)).summary).toMatchObject({ tests: 12, passed: 12 });
  });
});

describe("a shard whose attempt ends for good mid-batch", () => {
  it("hands back only the tests it did not report: each test counted once", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 2 }, { max_attempts: 1 }));
    const [lapsing, alive] = (await claimShards(2)) as [Job, Job];
    const listed = tests(12);
    await listTests(lapsing.lease_id, listed);
    const held = (await nextBatch(lapsing.lease_id)).body.batch as { id: string; tests: Test[] };
    expect(held.tests.length).toBeGreaterThan(1);
    const [reported, ...unreported] = held.tests as [Test, ...Test[]];
    await report(lapsing.lease_id, [reported]);

    server.clock.advance(ttlSeconds * 600);
    expect((await heartbeat(alive.lease_id)).status).toBe(200);
    server.clock.advance(ttlSeconds * 600);
    await server.app.services.agents.sweep();
    // No attempt left: the run ended errored, and its reported test stays its result.
    const stored = await server.app.services.database.db
      .selectFrom("test_batches")
      .select(["state", "tests", "lease_id"])
      .where("id", "=", held.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ state: "queued", lease_id: null });
    expect(JSON.parse(stored.tests)).toEqual(unreported);

    const ran = await runAll([alive]);
    const all = ran
      .get(alive.lease_id)
      ?.flatMap((batch) => batch.tests)
      .map(key);
    expect(all).toHaveLength(11);
    expect(new Set([...(all ?? []), key(reported)])).toEqual(new Set(listed.map(key)));
    await complete(alive.lease_id, { status: "passed" });

    const done = await execution(executionId);
    expect(done).toMatchObject({ status: "errored", summary: { tests: 12, passed: 12 } });
    const items = await executionTests(executionId);
    expect(items).toHaveLength(12);
    expect(items.find((item) => key(item) === key(reported))?.shard).toBe(lapsing.device_run.shard);
  });

  it("marks a batch whose every test was reported done when the agent completes without finishing it", async () => {
    await drainQueue();
    await trigger(await createPlan({ shards: 2 }));
    const [job, other] = (await claimShards(2)) as [Job, Job];
    await listTests(job.lease_id, tests(4));
    const held = (await nextBatch(job.lease_id)).body.batch as { id: string; tests: Test[] };
    await report(job.lease_id, held.tests);
    await complete(job.lease_id, { status: "passed" });
    expect(await statesOf([held.id])).toEqual({ [held.id]: "done" });
    await runAll([other]);
    await complete(other.lease_id, { status: "passed" });
  });
});

describe("tests no shard is left to run", () => {
  it("are errored 'did not run' when the last shard ends for good mid-batch: each listed test counted once", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 2 }, { max_attempts: 1 }));
    const [lapsing, alive] = (await claimShards(2)) as [Job, Job];
    const listed = tests(12);
    await listTests(lapsing.lease_id, listed);
    const held = (await nextBatch(lapsing.lease_id)).body.batch as { id: string; tests: Test[] };
    const [reported, ...unreported] = held.tests as [Test, ...Test[]];
    await report(lapsing.lease_id, [reported]);
    // The other shard runs everything else and finishes while the first still holds its batch.
    await runAll([alive]);
    expect((await complete(alive.lease_id, { status: "passed" })).body.execution_status).toBe("running");

    server.clock.advance(ttlSeconds * 1200);
    await server.app.services.agents.sweep();
    expect(await statesOf([held.id])).toEqual({ [held.id]: "done" });
    const done = await execution(executionId);
    expect(done.status).toBe("errored");
    expect(done.summary).toMatchObject({ tests: 12, passed: 12 - unreported.length });
    const items = await executionTests(executionId);
    expect(items).toHaveLength(12);
    const notRun = items.filter((item) => item.status === "errored");
    expect(new Set(notRun.map(key))).toEqual(new Set(unreported.map(key)));
    for (const item of notRun) {
      expect(item).toMatchObject({
        shard: lapsing.device_run.shard,
        message: expect.stringMatching(/^did not run: shard \d of 2 ended \(agent_lost\)/),
      });
    }
  });

  it("are errored when a uniform shard ends for good before taking its list, and fail an attempt reported passed", async () => {
    await drainQueue();
    const executionId = await trigger(
      await createPlan({ shards: 2, sharding: "uniform" }, { max_attempts: 1 }),
    );
    const [quitter, worker] = (await claimShards(2)) as [Job, Job];
    const listed = tests(6);
    await listTests(worker.lease_id, listed);
    await runAll([worker]);
    await complete(worker.lease_id, { status: "passed" });
    // The other shard's fixed list: only it could have run it.
    const ended = await complete(quitter.lease_id, { status: "passed" });
    expect(ended.body).toMatchObject({ status: "failed", requeued: false, execution_status: "failed" });
    expect((await execution(executionId)).summary).toMatchObject({ tests: 6, passed: 3, failed: 3 });
    const notRun = (await executionTests(executionId)).filter((item) => item.status === "errored");
    expect(notRun).toHaveLength(3);
    expect(new Set(notRun.map((item) => item.shard))).toEqual(new Set([quitter.device_run.shard]));
  });

  it("are handed back, not errored, while another shard can still run them", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 2 }, { max_attempts: 1 }));
    const [quitter, worker] = (await claimShards(2)) as [Job, Job];
    const listed = tests(8);
    await listTests(quitter.lease_id, listed);
    const held = (await nextBatch(quitter.lease_id)).body.batch as { id: string; tests: Test[] };
    await complete(quitter.lease_id, { status: "errored", reason: "step_timeout" });
    expect(await statesOf([held.id])).toEqual({ [held.id]: "queued" });
    await runAll([worker]);
    await complete(worker.lease_id, { status: "passed" });
    const items = await executionTests(executionId);
    expect(items.map((item) => item.status)).toEqual(Array(8).fill("passed"));
  });
});

describe("a shard that stops taking batches (next-batch with take: false)", () => {
  it("marks its last batch done and takes none, so the other shard runs every other test", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ shards: 2 }));
    const [stopping, other] = (await claimShards(2)) as [Job, Job];
    const listed = tests(12);
    await listTests(stopping.lease_id, listed);
    await listTests(other.lease_id, listed);
    const first = (await nextBatch(stopping.lease_id)).body.batch as { id: string; tests: Test[] };
    await report(stopping.lease_id, first.tests);
    // Its step ran out of time after this batch: it finishes it and takes nothing more.
    const stopped = await finishOnly(stopping.lease_id, first.id);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toEqual({ batch: null });
    expect(await batchStates(stopping.lease_id)).toEqual({ [first.id]: "done" });

    // The other shard takes the whole rest of the queue, before the stopping shard's attempt even ends.
    const ran = await runAll([other]);
    const otherTests = (ran.get(other.lease_id) ?? []).flatMap((batch) => batch.tests).map(key);
    expect(otherTests.sort()).toEqual(
      listed
        .map(key)
        .filter((k) => !first.tests.map(key).includes(k))
        .sort(),
    );
    expect((await complete(other.lease_id, { status: "passed" })).body.status).toBe("passed");
    expect((await complete(stopping.lease_id, { status: "passed" })).body).toMatchObject({
      execution_status: "passed",
    });
    expect((await execution(executionId)).summary).toMatchObject({ tests: 12, passed: 12 });
  });

  it("takes nothing when it finished no batch, and refuses a lost lease", async () => {
    await drainQueue();
    await trigger(await createPlan({ shards: 2 }));
    const [job, other] = (await claimShards(2)) as [Job, Job];
    await listTests(job.lease_id, tests(4));
    expect((await finishOnly(job.lease_id)).body).toEqual({ batch: null });
    expect(await batchStates(job.lease_id)).toEqual({});
    // A batch held by another lease is not this one's to finish.
    const held = (await nextBatch(other.lease_id)).body.batch as { id: string };
    expect((await finishOnly(job.lease_id, held.id)).body).toEqual({ batch: null });
    expect(await statesOf([held.id])).toEqual({ [held.id]: "running" });
    await complete(job.lease_id, { status: "passed" });
    expect((await finishOnly(job.lease_id)).body).toMatchObject({ code: "lease_lost" });
    await runAll([other]);
    await complete(other.lease_id, { status: "passed" });
  });
});

describe("the protocol's refusals", () => {
  it("refuses next-batch before the step was listed (409 shard_plan_missing), and calls of a lost lease", async () => {
    await drainQueue();
    await trigger(await createPlan({ shards: 2 }));
    const [job, other] = (await claimShards(2)) as [Job, Job];
    const missing = await nextBatch(job.lease_id);
    expect(missing.status).toBe(409);
    expect(missing.body).toMatchObject({ code: "shard_plan_missing" });
    expect(missing.body.fix).toContain("steps/{step_index}/tests");
    await complete(job.lease_id, { status: "passed" });
    expect((await listTests(job.lease_id, tests(2))).body).toMatchObject({ code: "lease_lost" });
    expect((await nextBatch(job.lease_id)).body).toMatchObject({ code: "lease_lost" });
    await complete(other.lease_id, { status: "passed" });
  });

  it("refuses a listing of a step that does not split tests, or on a shard the step does not run on", async () => {
    await drainQueue();
    const planId = await createPlan(
      {},
      {
        steps: [
          { type: "inspect", expect: { debuggable: false } },
          { type: "maestro", flows: [flow], shards: 2 },
          { type: "maestro", flows: [flow] },
        ],
      },
    );
    await trigger(planId);
    const jobs = (await claimShards(2)).sort((a, b) => a.device_run.shard - b.device_run.shard);
    const [first, second] = jobs as [Job, Job];
    const inspect = await listTests(first.lease_id, tests(2), 0);
    expect(inspect.status).toBe(400);
    expect(inspect.body).toMatchObject({ reason: "step_not_sharded" });
    // Step 2 has no shards of its own: it runs on shard 0 only.
    const offShard = await listTests(second.lease_id, tests(2), 2);
    expect(offShard.status).toBe(400);
    expect(offShard.body).toMatchObject({ reason: "step_not_on_shard" });
    expect((await listTests(first.lease_id, tests(2), 2)).body).toMatchObject({ planned: true });
    expect((await listTests(second.lease_id, tests(2), 1)).body).toMatchObject({ planned: true });
    for (const job of jobs) await complete(job.lease_id, { status: "passed" });
    // On shard 1, the inspect step and the unsharded maestro step do not run: skipped, not pending.
    const view = await execution(first.execution_id);
    expect(
      view.devices.map((run: { steps: Array<{ status: string }> }) => run.steps.map((step) => step.status)),
    ).toEqual([
      ["pending", "pending", "pending"],
      ["skipped", "pending", "skipped"],
    ]);
  });
});
