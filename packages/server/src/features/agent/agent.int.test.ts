import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

const ttlSeconds = 60;

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let otherOrgAgent: Record<string, string>;
let otherOrgCi: Record<string, string>;

const inspect = { type: "inspect", expect: { debuggable: false } };
const target = { package_name: "com.example.basic", version: "1.2.3" };
const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

async function createPlan(body: Record<string, unknown> = {}): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: { name: "plan", package_name: "com.example.basic", steps: [inspect], ...body },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function trigger(planId: string): Promise<string> {
  const response = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, ...target },
  });
  expect(response.status).toBe(200);
  return response.body.execution.id;
}

const claim = (json: Record<string, unknown> = {}, headers = agent) =>
  call(`${server.baseUrl}/agent/claim`, { headers, json: { agent_id: "agent-1", devices: [], ...json } });
const heartbeat = (lease: string, headers = agent) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/heartbeat`, { method: "POST", headers });
const events = (lease: string, list: unknown[], headers = agent) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/events`, { headers, json: { events: list } });
const complete = (lease: string, json: Record<string, unknown>, headers = agent) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/complete`, { headers, json });
const execution = async (id: string, headers = ci) =>
  (await call(`${server.baseUrl}/executions/${id}`, { headers })).body;

/** Claims until nothing is left, so each test starts with an empty queue. */
async function drainQueue() {
  for (let i = 0; i < 200; i++) {
    const { status, body } = await claim({
      step_types: ["inspect", "shell", "instrumentation", "maestro"],
      devices: [pixel],
    });
    if (status === 204) return;
    await complete(body.job.lease_id, { status: "cancelled" });
  }
}

const at = () => new Date(server.clock.now()).toISOString();
const testCase = (seq: number, name: string, status: string, message: string | null = null) => ({
  seq,
  type: "test_case",
  step_index: 0,
  classname: "com.example.LoginTest",
  name,
  status,
  message,
  details: message
    ? `java.lang.AssertionError: ${message}\n\tat com.example.LoginTest.${name}(LoginTest.kt:42)`
    : null,
  duration_ms: 1200,
});

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
  otherOrgCi = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
  otherOrgAgent = { "x-api-key": await server.token(await server.createClient("globex", "agent")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

describe("a claim whose agent hung up before the answer", () => {
  it("puts the run back in the queue as it was: same attempt, not running, claimable at once", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ name: "released", max_attempts: 1 }));
    const org = await server.app.services.database.db
      .selectFrom("organizations")
      .select("id")
      .where("name", "=", "acme")
      .executeTakeFirstOrThrow();
    const agents = server.app.services.agents;
    const granted = await agents.claim(
      { organizationId: org.id, agentId: "agent-1", devices: [], host: true, stepTypes: ["inspect"] },
      0,
      new AbortController().signal,
    );
    expect(granted?.execution_id).toBe(executionId);
    await agents.release(org.id, granted?.lease_id ?? "");
    const view = await execution(executionId);
    expect(view.devices[0]).toMatchObject({ status: "queued", attempt: 1, claimed_device: null });
    expect((await heartbeat(granted?.lease_id ?? "")).status).toBe(409);
    const { body } = await claim();
    expect(body.job).toMatchObject({ execution_id: executionId, device_run: { attempt: 1 } });
    expect((await complete(body.job.lease_id, { status: "passed" })).body).toMatchObject({
      status: "passed",
      execution_status: "passed",
    });
  });
});

describe("a claim the agent gave up on (abandoned_claims)", () => {
  it("puts the run it was granted back at once when a later claim of the agent names it; others' claims are not touched", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ name: "abandoned", max_attempts: 1 }));
    // The answer to this claim is taken to be lost: the agent stopped waiting just as it was granted.
    const lost = await claim({ claim_id: "claim-0001-aaaa" });
    expect(lost.body.job).toMatchObject({ execution_id: executionId });
    // Another agent naming the claim, or this agent naming another one, changes nothing.
    await claim({ agent_id: "agent-2", abandoned_claims: ["claim-0001-aaaa"], wait_seconds: 0 });
    expect((await claim({ abandoned_claims: ["claim-0002-bbbb"], wait_seconds: 0 })).status).toBe(204);
    expect((await heartbeat(lost.body.job.lease_id)).status).toBe(200);

    const again = await claim({ claim_id: "claim-0003-cccc", abandoned_claims: ["claim-0001-aaaa"] });
    expect(again.status).toBe(200);
    expect(again.body.job).toMatchObject({ execution_id: executionId, device_run: { attempt: 1 } });
    expect(again.body.job.lease_id).not.toBe(lost.body.job.lease_id);
    expect((await heartbeat(lost.body.job.lease_id)).status).toBe(409);
    // Named again later (agents keep naming a claim for a while): the run its next claim took is kept.
    expect((await claim({ abandoned_claims: ["claim-0001-aaaa"], wait_seconds: 0 })).status).toBe(204);
    expect((await complete(again.body.job.lease_id, { status: "passed" })).body).toMatchObject({
      execution_status: "passed",
    });
  });

  it("refuses a malformed claim id with 400", async () => {
    const response = await claim({ abandoned_claims: ["../../x"] });
    expect(response.status).toBe(400);
    expect(response.body.fix).toBeTruthy();
  });
});

describe("POST /v1/agent/claim", () => {
  it("answers 204 when there is nothing to do", async () => {
    await drainQueue();
    const { status } = await claim({ wait_seconds: 0 });
    expect(status).toBe(204);
  });

  it("hands out a queued run with its plan, binary and lease, and marks it running", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ name: "smoke" }));
    const { status, body } = await claim();
    expect(status).toBe(200);
    expect(body.job).toMatchObject({
      execution_id: executionId,
      lease_ttl_seconds: ttlSeconds,
      device_run: { position: 0, attempt: 1, max_attempts: 1 },
      plan: { name: "smoke", steps: [inspect] },
      package_name: "com.example.basic",
      version: "1.2.3",
      binary_url: "/v1/apps/com.example.basic/versions/1.2.3/binary",
      binary: { metadata: { package_name: "com.example.basic", format: "apk" } },
      device: null,
    });
    expect(body.job.binary.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(body.job.lease_id).toMatch(/^ls_/);
    const view = await execution(executionId);
    expect(view.status).toBe("running");
    expect(view.started_at).not.toBeNull();
    expect(view.devices[0]).toMatchObject({ status: "running", agent_id: "agent-1", attempt: 1 });
    // Agents can fetch the binary they were given.
    const binary = await fetch(`${server.origin}${body.job.binary_url}`, { headers: agent });
    expect(binary.status).toBe(200);
    expect((await binary.arrayBuffer()).byteLength).toBe(body.job.binary.size_bytes);
  });

  it("is for agent clients only", async () => {
    const { status, body } = await claim({}, ci);
    expect(status).toBe(403);
    expect(body.code).toBe("forbidden");
  });

  it("never hands another organization's runs to an agent", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan());
    expect((await claim({}, otherOrgAgent)).status).toBe(204);
    const mine = await claim();
    expect(mine.body.job.execution_id).toBe(executionId);
    // Nor can the other organization's agent use the lease or read the results.
    expect((await heartbeat(mine.body.job.lease_id, otherOrgAgent)).status).toBe(409);
    expect(
      (await call(`${server.baseUrl}/executions/${executionId}/junit`, { headers: otherOrgCi })).status,
    ).toBe(404);
  });

  it("waits for work when asked to, and wakes up when a run is queued", async () => {
    await drainQueue();
    const planId = await createPlan();
    const waiting = claim({ wait_seconds: 20 });
    // Give the claim time to start waiting; if it has not, it finds the run on its first look anyway.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const executionId = await trigger(planId);
    const { status, body } = await waiting;
    expect(status).toBe(200);
    expect(body.job.execution_id).toBe(executionId);
  });

  it("matches runs to the agent's devices and step types", async () => {
    await drainQueue();
    const onPixel = await trigger(await createPlan({ devices: [{ platform: "android", model: "Pixel 7" }] }));
    const withShell = await trigger(await createPlan({ steps: [{ type: "shell", run: "true" }] }));
    // No device and no shell: nothing fits.
    expect((await claim()).status).toBe(204);
    // A device of another model does not fit either.
    expect((await claim({ devices: [{ ...pixel, model: "Pixel 6" }], host: false })).status).toBe(204);
    const device = await claim({ devices: [pixel], host: false });
    expect(device.body.job).toMatchObject({ execution_id: onPixel, device: pixel });
    const shell = await claim({ step_types: ["inspect", "shell"] });
    expect(shell.body.job.execution_id).toBe(withShell);
  });

  it("hands each run to exactly one of many concurrent claims", async () => {
    await drainQueue();
    const planId = await createPlan();
    const executions = new Set<string>();
    for (let i = 0; i < 12; i++) executions.add(await trigger(planId));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => claim({ agent_id: `agent-${i % 4}` })),
    );
    const claimed = answers.filter((a) => a.status === 200).map((a) => a.body.job.execution_id);
    expect(claimed).toHaveLength(12);
    expect(new Set(claimed)).toEqual(executions);
    expect(answers.filter((a) => a.status === 204)).toHaveLength(8);
  });

  it("refuses a malformed claim with the path of the mistake", async () => {
    const { status, body } = await claim({ wait_seconds: 31 });
    expect(status).toBe(400);
    expect(body.errors[0].path).toBe("/wait_seconds");
  });
});

describe("reporting results", () => {
  it("stores test cases, steps and log lines once each, and derives a failed outcome from a failing test", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ name: "login" }));
    const lease = (await claim()).body.job.lease_id;
    const batch = [
      { seq: 0, type: "step_started", at: at(), step_index: 0 },
      { seq: 1, type: "log", at: at(), stream: "stdout", line: "running 2 tests" },
      testCase(2, "logsIn", "passed"),
      testCase(3, "rejectsWrongPassword", "failed", "expected <401> but was <200>"),
      { seq: 4, type: "step_finished", at: at(), step_index: 0, status: "failed", message: "1 test failed" },
    ];
    expect((await events(lease, batch)).body).toEqual({ accepted: 5, cancel_requested: false });
    // The same batch again (its answer was lost, say) changes nothing.
    expect((await events(lease, batch)).status).toBe(200);
    const done = await complete(lease, { status: "passed" });
    expect(done.body).toEqual({ status: "failed", requeued: false, execution_status: "failed" });

    const view = await execution(executionId);
    expect(view).toMatchObject({
      status: "failed",
      summary: { tests: 2, passed: 1, failed: 1, skipped: 0, flaky: 0 },
      steps: [{ index: 0, type: "inspect", status: "failed" }],
      devices: [
        {
          status: "failed",
          summary: { tests: 2, failed: 1 },
          steps: [{ status: "failed", message: "1 test failed" }],
        },
      ],
    });
    expect(view.finished_at).not.toBeNull();

    const junit = await fetch(`${server.baseUrl}/executions/${executionId}/junit`, { headers: ci });
    expect(junit.headers.get("content-type")).toMatch(/^application\/xml/);
    const xml = await junit.text();
    expect(xml).toContain('<testsuites name="login" tests="2" failures="1" errors="0" skipped="0">');
    expect(xml).toContain('<testcase classname="com.example.LoginTest" name="logsIn" time="1.200"/>');
    expect(xml).toContain(
      '<failure message="expected &lt;401&gt; but was &lt;200&gt;" type="java.lang.AssertionError">java.lang.AssertionError',
    );

    const log = await fetch(`${server.baseUrl}/executions/${executionId}/log`, { headers: ci });
    const text = await log.text();
    expect(text).toContain("=== device 1, attempt 1 ===");
    expect(text.match(/\[stdout\] running 2 tests/g)).toHaveLength(1);
  });

  it("keeps artifacts, lists them and serves them whole or by range", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan());
    const lease = (await claim()).body.job.lease_id;
    const put = (name: string, body: string) =>
      fetch(`${server.baseUrl}/agent/jobs/${lease}/artifacts/${name}`, {
        method: "PUT",
        headers: { ...agent, "content-type": "text/plain" },
        body,
      });
    expect((await put("screenshots/login.png", "first")).status).toBe(201);
    const replaced = await put("screenshots/login.png", "0123456789");
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({
      name: "screenshots/login.png",
      size_bytes: 10,
      created: false,
    });
    for (const bad of [".env", "a/.hidden", "%2E%2E/etc/passwd", "a%2F..%2F..%2Fb", "x".repeat(200)]) {
      // Dot segments are resolved by the URL parser before they leave the client: those land on no route.
      const response = await put(bad, "x");
      expect([400, 404], bad).toContain(response.status);
    }
    await complete(lease, { status: "passed" });

    const list = await call(`${server.baseUrl}/executions/${executionId}/artifacts`, { headers: ci });
    expect(list.body.items).toEqual([
      expect.objectContaining({
        name: "screenshots/login.png",
        device: 0,
        attempt: 1,
        size_bytes: 10,
        content_type: "text/plain",
      }),
    ]);
    const whole = await fetch(`${server.origin}${list.body.items[0].url}`, { headers: ci });
    expect(await whole.text()).toBe("0123456789");
    expect(whole.headers.get("content-disposition")).toBe('attachment; filename="login.png"');
    const part = await fetch(`${server.baseUrl}/executions/${executionId}/artifacts/screenshots/login.png`, {
      headers: { ...ci, range: "bytes=2-4" },
    });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("234");
    const missing = await call(`${server.baseUrl}/executions/${executionId}/artifacts/nope.txt`, {
      headers: ci,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("artifact_not_found");
  });

  it("keeps one artifact, and one stored object, when uploads of the same name finish together", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan());
    const lease = (await claim()).body.job.lease_id;
    const bodies = Array.from({ length: 8 }, (_, i) => `retry ${i}`);
    const answers = await Promise.all(
      bodies.map((body) =>
        fetch(`${server.baseUrl}/agent/jobs/${lease}/artifacts/video.mp4`, {
          method: "PUT",
          headers: { ...agent, "content-type": "video/mp4" },
          body,
        }),
      ),
    );
    // One created it, the others replaced it: none failed on the race (PostgreSQL answered 500 here).
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const list = await call(`${server.baseUrl}/executions/${executionId}/artifacts`, { headers: ci });
    expect(list.body.items).toHaveLength(1);
    const served = await (await fetch(`${server.origin}${list.body.items[0].url}`, { headers: ci })).text();
    expect(bodies).toContain(served);
    const stored: string[] = [];
    for await (const key of server.app.services.blobs.keys()) {
      if (key.startsWith(`artifacts/${executionId}/`)) stored.push(key);
    }
    expect(stored).toHaveLength(1);
  });

  it("refuses anything on a lease that ended", async () => {
    await drainQueue();
    await trigger(await createPlan());
    const lease = (await claim()).body.job.lease_id;
    await complete(lease, { status: "passed" });
    for (const response of [
      await heartbeat(lease),
      await events(lease, [{ seq: 0, type: "log", at: at(), stream: "agent", line: "late" }]),
      await complete(lease, { status: "passed" }),
    ]) {
      expect(response.status).toBe(409);
      expect(response.body.code).toBe("lease_lost");
      expect(response.body.fix).toMatch(/Claim a new job/);
    }
  });
});

describe("leases", () => {
  it("renews a lease on heartbeat and reports a cancel request, which ends the run cancelled", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan());
    const job = (await claim()).body.job;
    server.clock.advance(30_000);
    const renewed = await heartbeat(job.lease_id);
    expect(renewed.body.cancel_requested).toBe(false);
    expect(Date.parse(renewed.body.lease_expires_at)).toBe(server.clock.now() + ttlSeconds * 1000);

    const cancel = await call(`${server.baseUrl}/executions/${executionId}/cancel`, {
      method: "POST",
      headers: ci,
    });
    expect(cancel.body).toMatchObject({ status: "running", cancel_requested: true });
    expect((await heartbeat(job.lease_id)).body.cancel_requested).toBe(true);
    expect((await complete(job.lease_id, { status: "cancelled" })).body.execution_status).toBe("cancelled");
    expect((await execution(executionId)).status).toBe("cancelled");
  });

  it("re-queues a run whose lease lapsed, up to max_attempts, then ends it errored with agent_lost", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ max_attempts: 2 }));
    const first = (await claim({ agent_id: "doomed" })).body.job;
    server.clock.advance(ttlSeconds * 1000 + 1);
    await server.app.services.agents.sweep();
    expect((await execution(executionId)).devices[0]).toMatchObject({
      status: "queued",
      attempt: 2,
      reason: "agent_lost",
    });
    expect((await heartbeat(first.lease_id)).status).toBe(409);

    const second = (await claim({ agent_id: "also-doomed" })).body.job;
    expect(second.device_run.attempt).toBe(2);
    server.clock.advance(ttlSeconds * 1000 + 1);
    await server.app.services.agents.sweep();
    expect(await execution(executionId)).toMatchObject({
      status: "errored",
      devices: [{ status: "errored", attempt: 2, reason: "agent_lost" }],
    });
  });

  it("does not expire a lease that heartbeats keep renewing", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan());
    const job = (await claim()).body.job;
    for (let i = 0; i < 3; i++) {
      server.clock.advance((ttlSeconds * 1000) / 2);
      expect((await heartbeat(job.lease_id)).status).toBe(200);
      await server.app.services.agents.sweep();
    }
    expect((await execution(executionId)).status).toBe("running");
  });

  it("retries a failed attempt and counts a test that failed and then passed as flaky", async () => {
    await drainQueue();
    const executionId = await trigger(await createPlan({ max_attempts: 2 }));
    const first = (await claim()).body.job;
    await events(first.lease_id, [testCase(0, "logsIn", "failed", "timed out waiting for the login button")]);
    expect((await complete(first.lease_id, { status: "failed" })).body).toEqual({
      status: "failed",
      requeued: true,
      execution_status: "running",
    });
    const second = (await claim()).body.job;
    expect(second.device_run.attempt).toBe(2);
    await events(second.lease_id, [testCase(0, "logsIn", "passed")]);
    await complete(second.lease_id, { status: "passed" });
    expect(await execution(executionId)).toMatchObject({
      status: "passed",
      summary: { tests: 1, passed: 1, failed: 0, flaky: 1 },
    });
    const xml = await (
      await fetch(`${server.baseUrl}/executions/${executionId}/junit`, { headers: ci })
    ).text();
    expect(xml).toContain(
      '<flakyFailure message="timed out waiting for the login button" type="java.lang.AssertionError">',
    );
    expect(xml).toContain("(attempt 2)");
  });
});
