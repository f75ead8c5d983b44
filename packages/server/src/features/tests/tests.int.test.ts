import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let otherCi: Record<string, string>;

const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

async function createPlan(): Promise<string> {
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `history ${Math.random()}`,
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      max_attempts: 2,
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function trigger(planId: string): Promise<string> {
  // Executions of the window are ordered by when they were triggered: one a minute.
  server.clock.advance(60_000);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

async function claim(): Promise<string> {
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [pixel], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  return claimed.body.job.lease_id;
}

type Case = [name: string, status: string, durationMs?: number];

/** Reports one attempt's test cases, in order, and completes it failed or passed as they say. */
async function attempt(lease: string, cases: Case[]) {
  const events = cases.map(([name, status, durationMs = 1000], i) => ({
    seq: i + 1,
    type: "test_case",
    step_index: 0,
    classname: "com.example.LoginTest",
    name,
    status,
    duration_ms: durationMs,
    message: status === "passed" ? null : `${name} broke`,
  }));
  const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(sent.status).toBe(200);
  const failed = cases.some(([, status]) => status === "failed");
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: failed ? "failed" : "passed" },
  });
  expect(done.status).toBe(200);
  return done.body;
}

/**
 * One execution of the plan. A failed attempt is re-queued (max_attempts 2): the second attempt reports
 * `second`, or the same results again.
 */
async function run(planId: string, first: Case[], second?: Case[]): Promise<string> {
  const id = await trigger(planId);
  const ended = await attempt(await claim(), first);
  if (ended.requeued) await attempt(await claim(), second ?? first);
  expect(second === undefined || ended.requeued).toBe(true);
  return id;
}

const history = (query: string, headers = ci) => call(`${server.baseUrl}/tests?${query}`, { headers });

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

describe("GET /v1/tests", () => {
  let planId: string;
  const executions: string[] = [];

  beforeAll(async () => {
    planId = await createPlan();
    executions.push(
      await run(planId, [
        ["signsIn", "passed", 100],
        ["signsOut", "passed"],
        ["remembersUser", "skipped", 5],
      ]),
    );
    // signsIn fails on the first attempt and passes on the re-queued one: flaky. signsOut regresses.
    executions.push(
      await run(
        planId,
        [
          ["signsIn", "failed", 900],
          ["signsOut", "passed"],
        ],
        [
          ["signsIn", "passed", 200],
          ["signsOut", "failed"],
        ],
      ),
    );
    // resumes is new and retried within the run (failed, then passed on the same attempt): flaky too.
    executions.push(
      await run(planId, [
        ["signsIn", "passed", 300],
        ["signsOut", "failed"],
        ["opensSettings", "failed"],
        ["resumes", "failed"],
        ["resumes", "passed"],
      ]),
    );
    // Still running: not part of the history until it finishes.
    await trigger(planId);
    const lease = await claim();
    await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
      headers: agent,
      json: {
        events: [
          {
            seq: 1,
            type: "test_case",
            step_index: 0,
            classname: "com.example.LoginTest",
            name: "signsIn",
            status: "failed",
          },
        ],
      },
    });
  });

  it("gives each test's runs, failures, flaky runs, durations and last status, most failures first", async () => {
    const { status, body } = await history(`test_plan_id=${planId}`);
    expect(status).toBe(200);
    expect(body.next_cursor).toBeNull();
    expect(body.items.map((t: { name: string }) => t.name)).toEqual([
      "signsOut",
      "opensSettings",
      "remembersUser",
      "resumes",
      "signsIn",
    ]);
    const [first, , third] = await Promise.all(
      executions.map(async (id) => (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body),
    );
    const [signsOut, opensSettings, remembersUser, resumes, signsIn] = body.items;
    expect(signsOut).toEqual({
      id: expect.stringMatching(/^t_[0-9a-f]{24}$/),
      classname: "com.example.LoginTest",
      name: "signsOut",
      runs: 3,
      failures: 2,
      flaky_runs: 0,
      flaky_rate: 0,
      p50_ms: 1000,
      p80_ms: 1000,
      last_status: "failed",
      last_execution_id: third.id,
      last_run_at: third.created_at,
      first_seen_at: first.created_at,
      new: false,
      quarantined: false,
      quarantine: null,
    });
    expect(opensSettings).toMatchObject({
      runs: 1,
      failures: 1,
      flaky_runs: 0,
      new: true,
      last_status: "failed",
    });
    expect(opensSettings.first_seen_at).toBe(third.created_at);
    // Skipped results count as runs but not as durations.
    expect(remembersUser).toMatchObject({
      runs: 1,
      failures: 0,
      new: false,
      last_status: "skipped",
      last_execution_id: first.id,
      last_run_at: first.created_at,
      p50_ms: null,
      p80_ms: null,
    });
    expect(resumes).toMatchObject({ runs: 1, failures: 0, flaky_runs: 1, flaky_rate: 1, new: true });
    // The failed first attempt's 900 ms is not a final duration.
    expect(signsIn).toMatchObject({
      runs: 3,
      failures: 0,
      flaky_runs: 1,
      flaky_rate: 0.333,
      p50_ms: 200,
      p80_ms: 300,
      last_status: "passed",
      new: false,
    });

    // The ids are those GET /executions/{id}/tests gives the same tests.
    const listed = await call(`${server.baseUrl}/executions/${third.id}/tests`, { headers: ci });
    const idOf = (items: Array<{ id: string; name: string }>, name: string) =>
      items.find((t) => t.name === name)?.id;
    for (const name of ["signsIn", "signsOut", "opensSettings", "resumes"]) {
      expect(idOf(body.items, name)).toBe(idOf(listed.body.items, name));
    }
  });

  it("looks at the last `window` finished executions only", async () => {
    const newest = await history(`test_plan_id=${planId}&window=1`);
    expect(
      newest.body.items.map((t: { name: string; runs: number; new: boolean }) => [t.name, t.runs, t.new]),
    ).toEqual([
      ["opensSettings", 1, true],
      ["signsOut", 1, true],
      ["resumes", 1, true],
      ["signsIn", 1, true],
    ]);
    const two = await history(`test_plan_id=${planId}&window=2`);
    const signsOut = two.body.items.find((t: { name: string }) => t.name === "signsOut");
    expect(signsOut).toMatchObject({ runs: 2, failures: 2, new: false });
    expect(two.body.items.map((t: { name: string }) => t.name)).not.toContain("remembersUser");
  });

  it("pages by cursor through the same order", async () => {
    const all = (await history(`test_plan_id=${planId}`)).body.items;
    const pages = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: unknown[]; next_cursor: string | null } } = await history(
        `test_plan_id=${planId}&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.status).toBe(200);
      pages.push(page.body.items);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(all);
  });

  it("pages through tests with the longest names a test can have", async () => {
    const other = await createPlan();
    const names = ["ü", "ö", "ä"].map((letter) => letter.repeat(500));
    await run(
      other,
      names.map((name): Case => [name, "passed"]),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: Array<{ name: string }>; next_cursor: string | null } } =
        await history(`test_plan_id=${other}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((t) => t.name));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...names].sort());
  });

  it("answers an empty list for a plan that has not finished a run", async () => {
    const { status, body } = await history(`test_plan_id=${await createPlan()}`);
    expect(status).toBe(200);
    expect(body).toEqual({ items: [], next_cursor: null });
  });

  it("answers 404 for another organization's plan, as GET /testplans/{id} does", async () => {
    const { status, body } = await history(`test_plan_id=${planId}`, otherCi);
    expect(status).toBe(404);
    expect(body).toMatchObject({ code: "test_plan_not_found", fix: expect.any(String) });
    expect((await call(`${server.baseUrl}/testplans/${planId}`, { headers: otherCi })).status).toBe(404);
  });

  it("refuses a missing plan, a window out of range and a cursor of another list, saying what to fix", async () => {
    const missing = await history("window=5");
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: "invalid_request",
      fix: expect.any(String),
      errors: [{ path: "/test_plan_id", in: "querystring", message: "is required" }],
    });
    for (const window of [0, 101]) {
      const wrong = await history(`test_plan_id=${planId}&window=${window}`);
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors[0].path).toBe("/window");
    }
    const page = await call(`${server.baseUrl}/executions?limit=1`, { headers: ci });
    const foreign = page.body.next_cursor;
    expect(foreign).toEqual(expect.any(String));
    const refused = await history(`test_plan_id=${planId}&cursor=${foreign}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: "invalid_request",
      fix: expect.stringContaining("next_cursor"),
    });
  });

  it("reads again once another run of the plan has finished", async () => {
    const before = await history(`test_plan_id=${planId}`);
    expect(before.body.items[0]).toMatchObject({ name: "signsOut", runs: 3, last_status: "failed" });
    await run(planId, [["signsOut", "passed"]]);
    const after = await history(`test_plan_id=${planId}`);
    expect(after.body.items.find((t: { name: string }) => t.name === "signsOut")).toMatchObject({
      runs: 4,
      failures: 2,
      last_status: "passed",
    });
    const newest = await history(`test_plan_id=${planId}&window=1`);
    expect(newest.body.items.map((t: { name: string }) => t.name)).toEqual(["signsOut"]);
  });
});
