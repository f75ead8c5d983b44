import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let otherCi: Record<string, string>;

const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

async function triggerPlan(maxAttempts: number): Promise<string> {
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `tests ${maxAttempts} ${Math.random()}`,
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      max_attempts: maxAttempts,
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: created.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

async function claimJob() {
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [pixel], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  return claimed.body.job;
}

const testCase = (seq: number, name: string, status: string, extra: Record<string, unknown> = {}) => ({
  seq,
  type: "test_case",
  step_index: 0,
  classname: "com.example.LoginTest",
  name,
  status,
  duration_ms: 1000 + seq,
  message: status === "passed" ? null : `${name} broke`,
  details: status === "passed" ? null : `java.lang.AssertionError: ${name} broke\n\tat com.example.LoginTest`,
  ...extra,
});

async function report(lease: string, events: unknown[], status: string, reason?: string) {
  const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(sent.status).toBe(200);
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status, ...(reason ? { reason } : {}) },
  });
  expect(done.status).toBe(200);
  return done.body;
}

const tests = async (id: string, query = "", headers = ci) =>
  call(`${server.baseUrl}/executions/${id}/tests${query}`, { headers });

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  otherCi = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

describe("GET /v1/executions/{id}/tests", () => {
  it("lists each test once with its final status, message, stack, device, attempts and artifacts", async () => {
    const id = await triggerPlan(2);
    const first = await claimJob();
    const shot = "screenshots/com.example.LoginTest.signsIn.png";
    const put = await fetch(`${server.baseUrl}/agent/jobs/${first.lease_id}/artifacts/${shot}`, {
      method: "PUT",
      headers: { ...agent, "content-type": "image/png" },
      body: Buffer.from("\x89PNG\r\n\x1a\nnot really"),
    });
    expect(put.status).toBe(201);
    const ended = await report(
      first.lease_id,
      [
        testCase(1, "signsIn", "failed", { artifacts: [shot] }),
        testCase(2, "signsOut", "passed"),
        testCase(3, "remembersUser", "skipped"),
      ],
      "failed",
    );
    expect(ended).toMatchObject({ status: "failed", requeued: true });
    const second = await claimJob();
    await report(
      second.lease_id,
      [
        testCase(1, "signsIn", "passed"),
        testCase(2, "signsOut", "failed"),
        testCase(3, "remembersUser", "skipped"),
      ],
      "failed",
    );

    const { status, body } = await tests(id);
    expect(status).toBe(200);
    expect(body.next_cursor).toBeNull();
    expect(body.items.map((t: { name: string }) => t.name)).toEqual(["signsIn", "signsOut", "remembersUser"]);
    const [signsIn, signsOut] = body.items;
    expect(signsIn).toMatchObject({
      id: expect.stringMatching(/^t_[0-9a-f]{24}$/),
      classname: "com.example.LoginTest",
      status: "passed",
      flaky: true,
      quarantined: false,
      attempt: 2,
      device: {
        position: 0,
        platform: "android",
        serial: "emulator-5554",
        model: "Pixel 7",
        os_version: "14",
      },
      attempts: [
        { attempt: 1, status: "failed", message: "signsIn broke" },
        { attempt: 2, status: "passed", message: null },
      ],
      artifacts: [],
    });
    expect(signsOut).toMatchObject({
      status: "failed",
      flaky: false,
      message: "signsOut broke",
      stack_trace: expect.stringContaining("java.lang.AssertionError: signsOut broke"),
    });

    // The first attempt's screenshot is named on its test case and downloadable as its URL says.
    const failedFirst = await tests(id, "?status=failed");
    expect(failedFirst.body.items.map((t: { name: string }) => t.name)).toEqual(["signsOut"]);
    const artifacts = await call(`${server.baseUrl}/executions/${id}/artifacts`, { headers: ci });
    expect(artifacts.body.items).toEqual([expect.objectContaining({ name: shot, attempt: 1 })]);
  });

  it("keeps the artifact names an attempt's test case reported", async () => {
    const id = await triggerPlan(1);
    const job = await claimJob();
    const names = ["screenshots/a.png", "logcat/com.example.LoginTest.signsIn.txt"];
    await report(job.lease_id, [testCase(1, "signsIn", "failed", { artifacts: names })], "failed");
    const { body } = await tests(id);
    expect(body.items[0].artifacts).toEqual(names);
  });

  it("pages with a cursor and keeps other organizations out", async () => {
    const id = await triggerPlan(1);
    const job = await claimJob();
    const cases = Array.from({ length: 5 }, (_, i) => testCase(i + 1, `test${i + 1}`, "passed"));
    await report(job.lease_id, cases, "passed");
    const seen: string[] = [];
    let query = "?limit=2";
    for (let page = 0; page < 5; page++) {
      const { body } = await tests(id, query);
      seen.push(...body.items.map((t: { name: string }) => t.name));
      if (body.next_cursor === null) break;
      query = `?limit=2&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual(["test1", "test2", "test3", "test4", "test5"]);
    expect((await tests(id, "", otherCi)).status).toBe(404);
    expect((await tests(id, "?cursor=nonsense")).status).toBe(400);
  });
});

describe("a device lost mid-run", () => {
  it("re-queues the run even at max_attempts 1, and its tests are not failures", async () => {
    const id = await triggerPlan(1);
    const first = await claimJob();
    const ended = await report(first.lease_id, [testCase(1, "signsIn", "passed")], "errored", "device_lost");
    expect(ended).toMatchObject({ status: "errored", requeued: true, execution_status: "running" });
    const second = await claimJob();
    expect(second.device_run.attempt).toBe(2);
    await report(
      second.lease_id,
      [testCase(1, "signsIn", "passed"), testCase(2, "signsOut", "passed")],
      "passed",
    );
    const view = (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
    expect(view).toMatchObject({ status: "passed", summary: { tests: 2, passed: 2, failed: 0 } });
  });
});

describe("GET /v1/agents", () => {
  it("shows the devices an agent drained", async () => {
    const drained = { serial: "R58M123", platform: "android", model: "Galaxy S21", os_version: "13" };
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "rack-2", devices: [pixel], drained_devices: [drained], step_types: ["maestro"] },
    });
    expect(claimed.status).toBe(204);
    const { body } = await call(`${server.baseUrl}/agents`, { headers: ci });
    const rack = body.items.find((a: { id: string }) => a.id === "rack-2");
    expect(rack.devices).toEqual([
      { ...drained, state: "drained" },
      { ...pixel, state: "idle" },
    ]);
  });
});
