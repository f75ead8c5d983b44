import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

/**
 * Failure groups and trends (API.md §16) over runs reported the way agents report them: real HTTP, the agent
 * protocol, the real database (sqlite and postgres projects).
 */

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let otherCi: Record<string, string>;
let credentials: Record<"ci" | "agent" | "otherCi", Awaited<ReturnType<TestServer["createClient"]>>>;
let planId: string;

const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
const day = 24 * 60 * 60 * 1000;

/** A failure as the instrumentation parser reports it: the exception line, then the stack. */
function failure(exception: string, frames: string[]) {
  const stack = [
    exception,
    "\tat androidx.test.espresso.base.DefaultFailureHandler.handle(DefaultFailureHandler.java:55)",
    ...frames.map((frame) => `\tat ${frame}`),
    "\tat java.lang.reflect.Method.invoke(Native Method)",
    "\tat org.junit.runners.model.FrameworkMethod$1.runReflectiveCall(FrameworkMethod.java:59)",
  ].join("\n");
  return { message: exception, details: stack };
}

/** Group A: a view not found on the login page, from two tests, with other ids and line numbers each time. */
const noView = (id: string, line: number, test: string) =>
  failure(
    `androidx.test.espresso.NoMatchingViewException: No views in hierarchy found matching: with id: ${id}`,
    [
      `com.example.basic.LoginPage.submit(LoginPage.kt:${line})`,
      `com.example.basic.LoginTest.${test}(LoginTest.kt:${line + 20})`,
    ],
  );
/** Group B: an assertion in the cart test, with other values each time. */
const cartCount = (expected: number, actual: number) =>
  failure(`java.lang.AssertionError: expected:<${expected}> but was:<${actual}>`, [
    "com.example.basic.CartTest.adds(CartTest.kt:31)",
  ]);

type Case = { name: string; status: "passed" | "failed"; message?: string; details?: string };
const passed = (name: string): Case => ({ name, status: "passed" });
const failed = (name: string, f: { message: string; details: string }): Case => ({
  name,
  status: "failed",
  ...f,
});

/** One execution of the plan on `version` at `commit`, one attempt reporting `cases`, lasting `durationMs`. */
async function run(version: string, commit: string, cases: Case[], durationMs = 1000): Promise<string> {
  server.clock.advance(60_000);
  const triggered = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version, ci: { commit } },
  });
  expect(triggered.status).toBe(200);
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [pixel], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  const lease = claimed.body.job.lease_id;
  server.clock.advance(durationMs);
  const events = cases.map((c, i) => ({
    seq: i + 1,
    type: "test_case",
    step_index: 0,
    classname: c.name === "adds" ? "com.example.basic.CartTest" : "com.example.basic.LoginTest",
    name: c.name,
    status: c.status,
    duration_ms: 100,
    message: c.message ?? null,
    details: c.details ?? null,
  }));
  const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events },
  });
  expect(sent.status).toBe(200);
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: cases.some((c) => c.status === "failed") ? "failed" : "passed" },
  });
  expect(done.status).toBe(200);
  expect(done.body.requeued ?? false).toBe(false);
  return triggered.body.execution.id;
}

/** Fresh tokens: after the clock moved on by days, the earlier ones have expired. */
async function signIn() {
  ci = { "x-api-key": await server.token(credentials.ci) };
  agent = { "x-api-key": await server.token(credentials.agent) };
  otherCi = { "x-api-key": await server.token(credentials.otherCi) };
}

const get = (path: string, headers = ci) => call(`${server.baseUrl}${path}`, { headers });

interface Group {
  signature: string;
  title: string;
  status: string;
  occurrences: number;
  tests: number;
  executions: number;
  first_seen: { execution_id: string; version: string; commit: string; at: string };
  last_seen: { execution_id: string; version: string; commit: string; at: string };
  example: { execution_id: string; test_id: string; message: string; stack_head: string };
}

async function groups(query = ""): Promise<Group[]> {
  const listed = await get(`/failures?test_plan_id=${planId}${query}`);
  expect(listed.status).toBe(200);
  return listed.body.items;
}

const byTitle = (items: Group[], start: string) => items.find((g) => g.title.startsWith(start));

const e: string[] = [];

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  credentials = {
    ci: await server.createClient("acme", "ci"),
    agent: await server.createClient("acme", "agent"),
    otherCi: await server.createClient("globex", "ci"),
  };
  await signIn();
  await registerBasicApp(server, ci, "1.0.0");
  await registerBasicApp(server, ci, "1.1.0");
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "failures",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      max_attempts: 1,
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(created.status).toBe(201);
  planId = created.body.id;

  // Day 1, two versions: A fails in two tests (other ids, other lines), B in one.
  e.push(
    await run("1.0.0", "aaa111", [
      failed("signsIn", noView("0x7f0a0062", 40, "signsIn")),
      failed("signsOut", noView("0x7f0a01b3", 41, "signsOut")),
      failed("adds", cartCount(2, 3)),
    ]),
  );
  e.push(
    await run("1.1.0", "bbb222", [
      failed("signsIn", noView("0x7f0a0071", 52, "signsIn")),
      passed("signsOut"),
      failed("adds", cartCount(5, 4)),
    ]),
  );
});
afterAll(() => server.close());

describe("GET /v1/failures", () => {
  it("groups the same failure across tests, runs and versions, with where it was first and last seen", async () => {
    const items = await groups();
    expect(items).toHaveLength(2);
    const view = byTitle(items, "NoMatchingViewException");
    const cart = byTitle(items, "AssertionError");
    expect(view).toMatchObject({
      title: "NoMatchingViewException: No views in hierarchy found matching: with id: <hex>",
      status: "new",
      occurrences: 3,
      tests: 2,
      executions: 2,
      first_seen: { execution_id: e[0], version: "1.0.0", commit: "aaa111" },
      last_seen: { execution_id: e[1], version: "1.1.0", commit: "bbb222" },
      example: {
        execution_id: e[1],
        message:
          "androidx.test.espresso.NoMatchingViewException: No views in hierarchy found matching: with id: 0x7f0a0071",
      },
    });
    expect(view?.example.stack_head).toContain("com.example.basic.LoginPage.submit(LoginPage.kt:52)");
    expect(view?.example.test_id).toMatch(/^t_[0-9a-f]{24}$/);
    expect(cart).toMatchObject({
      title: "AssertionError: expected:<…> but was:<…>",
      occurrences: 2,
      tests: 1,
      executions: 2,
    });
    expect(view?.signature).toMatch(/^[0-9a-f]{24}$/);
    expect(view?.signature).not.toBe(cart?.signature);
    // Newest last seen first: both were last seen in e[1]; then by signature.
    expect(Date.parse(view?.first_seen.at ?? "")).toBeLessThan(Date.parse(view?.last_seen.at ?? ""));
  });

  it("lists a group's occurrences newest first, paged", async () => {
    const view = byTitle(await groups(), "NoMatchingViewException") as Group;
    const first = await get(`/failures/${view.signature}/occurrences?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.title).toBe(view.title);
    expect(first.body.items.map((o: { execution_id: string }) => o.execution_id)).toEqual([e[1], e[0]]);
    expect(first.body.items[0]).toMatchObject({
      name: "signsIn",
      status: "failed",
      version: "1.1.0",
      commit: "bbb222",
      // The device the agent claimed, as people read it.
      device: "Pixel 7, android 14 (emulator-5554)",
    });
    const second = await get(
      `/failures/${view.signature}/occurrences?limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0]).toMatchObject({ execution_id: e[0], version: "1.0.0" });
    expect(second.body.next_cursor).toBeNull();
  });

  it("turns ongoing after a day, and fixed once its tests passed in the plan's last 3 executions", async () => {
    server.clock.advance(2 * day);
    await signIn();
    // The login tests pass from here on; the cart test goes on failing. openSettings is flaky once.
    e.push(
      await run(
        "1.1.0",
        "ccc333",
        [passed("signsIn"), passed("signsOut"), failed("adds", cartCount(1, 0))],
        1000,
      ),
    );
    e.push(
      await run(
        "1.1.0",
        "ccc333",
        [
          passed("signsIn"),
          passed("signsOut"),
          failed("adds", cartCount(9, 8)),
          failed(
            "opensSettings",
            failure("java.lang.IllegalStateException: timed out after 5000 ms", [
              "com.example.basic.SettingsTest.opensSettings(SettingsTest.kt:12)",
            ]),
          ),
          passed("opensSettings"),
        ],
        2000,
      ),
    );
    let items = await groups();
    expect(byTitle(items, "NoMatchingViewException")?.status).toBe("ongoing");
    expect(byTitle(items, "IllegalStateException")?.status).toBe("new");

    e.push(
      await run(
        "1.1.0",
        "ddd444",
        [passed("signsIn"), passed("signsOut"), failed("adds", cartCount(3, 3))],
        3000,
      ),
    );
    items = await groups();
    expect(byTitle(items, "NoMatchingViewException")).toMatchObject({
      status: "fixed",
      last_seen: { execution_id: e[1] },
    });
    expect(byTitle(items, "AssertionError")).toMatchObject({
      status: "ongoing",
      occurrences: 5,
      last_seen: { execution_id: e[4] },
    });

    const fixed = await groups("&status=fixed");
    expect(fixed.map((g) => g.title)).toEqual([byTitle(items, "NoMatchingViewException")?.title]);
    const ongoing = await groups("&status=ongoing");
    expect(ongoing.map((g) => g.title)).toEqual(["AssertionError: expected:<…> but was:<…>"]);
  });

  it("filters by time and app, and pages by cursor", async () => {
    const recent = await groups(`&since=${new Date(server.clock.now() - day).toISOString()}`);
    expect(recent.map((g) => g.title).sort()).toEqual([
      "AssertionError: expected:<…> but was:<…>",
      "IllegalStateException: timed out after <n> ms",
    ]);
    expect(await groups("&package_name=com.example.other")).toEqual([]);
    const first = await get(`/failures?test_plan_id=${planId}&limit=2`);
    expect(first.body.items).toHaveLength(2);
    // Newest last seen first: the cart assertion (e[4]), then the flaky settings test (e[3]).
    expect(first.body.items[0].last_seen.execution_id).toBe(e[4]);
    const second = await get(`/failures?test_plan_id=${planId}&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.items.map((g: Group) => g.title)).toEqual([
      byTitle(await groups(), "NoMatchingViewException")?.title,
    ]);
    expect(second.body.next_cursor).toBeNull();
  });

  it("shows no other organization's failures", async () => {
    const view = byTitle(await groups(), "NoMatchingViewException") as Group;
    const theirs = await get("/failures", otherCi);
    expect(theirs.status).toBe(200);
    expect(theirs.body.items).toEqual([]);
    const occurrences = await get(`/failures/${view.signature}/occurrences`, otherCi);
    expect(occurrences.status).toBe(404);
    expect(occurrences.body).toMatchObject({ code: "failure_group_not_found", fix: expect.any(String) });
    expect((await get(`/testplans/${planId}/trends`, otherCi)).status).toBe(404);
  });

  it("refuses a malformed signature or cursor with what to do", async () => {
    const bad = await get("/failures/not-a-signature/occurrences");
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "invalid_request", fix: expect.any(String) });
    const cursor = await get("/failures?cursor=bm9wZQ");
    expect(cursor.status).toBe(400);
    expect(cursor.body.fix).toEqual(expect.any(String));
  });
});

describe("GET /v1/testplans/{id}/trends", () => {
  it("gives each day with executions: pass rate, durations, flaky tests and new failure groups", async () => {
    const trends = await get(`/testplans/${planId}/trends?days=30`);
    expect(trends.status).toBe(200);
    // Day 1 (2026-01-01): e[0], e[1], both failed, 1 s each, groups A and B new. Day 2 left out (no runs).
    // Day 3: e[2..4], all failed on the cart test; 1, 2 and 3 s; opensSettings flaky; its group new.
    expect(trends.body.days).toEqual([
      {
        date: "2026-01-01",
        executions: 2,
        passed: 0,
        pass_rate: 0,
        p50_ms: 1000,
        p95_ms: 1000,
        flaky_tests: 0,
        new_failure_groups: 2,
      },
      {
        date: "2026-01-03",
        executions: 3,
        passed: 0,
        pass_rate: 0,
        p50_ms: 2000,
        p95_ms: 3000,
        flaky_tests: 1,
        new_failure_groups: 1,
      },
    ]);
  });

  it("counts passes into the pass rate, and leaves out days before the window", async () => {
    await run("1.1.0", "eee555", [passed("signsIn"), passed("signsOut"), passed("adds")], 4000);
    const trends = await get(`/testplans/${planId}/trends?days=1`);
    expect(trends.status).toBe(200);
    expect(trends.body.days).toEqual([
      expect.objectContaining({
        date: "2026-01-03",
        executions: 4,
        passed: 1,
        pass_rate: 0.25,
        p50_ms: 2000,
        p95_ms: 4000,
      }),
    ]);
  });
});
