import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportAttempt } from "../../../test/agent-attempt.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

/** PUT/DELETE /v1/tests/{test_id}/quarantine, and where a quarantine shows (API.md §6). */

let server: TestServer;
let ci: Record<string, string>;
let ciClientId: string;
let agent: Record<string, string>;
let otherCi: Record<string, string>;
let admin: Session;
let member: Session;
let viewer: Session;
let planId: string;
let executionId: string;
/** The ids GET /executions/{id}/tests gave the tests, by name. */
const ids: Record<string, string> = {};

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(email: string, role: "viewer" | "member" | "admin"): Promise<Session> {
  const account = await server.app.services.people.createUser({ email, role, org: "acme" });
  const response = await call(`${server.origin}/auth/login`, {
    json: { email, password: account.password },
  });
  expect(response.status).toBe(200);
  return {
    cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    csrf: response.body.csrf_token as string,
  };
}

const asPerson = (session: Session) => ({ cookie: session.cookie, "x-csrf-token": session.csrf });

const quarantine = (testId: string, reason: unknown, headers: Record<string, string> = ci) =>
  call(`${server.baseUrl}/tests/${testId}/quarantine`, {
    method: "PUT",
    headers,
    json: reason === undefined ? {} : { reason },
  });

const release = (testId: string, headers: Record<string, string> = ci) =>
  call(`${server.baseUrl}/tests/${testId}/quarantine`, { method: "DELETE", headers });

/** One execution of the plan whose agent reports `cases` ([name, status]) and completes it. */
async function run(cases: Array<[string, "passed" | "failed"]>): Promise<string> {
  server.clock.advance(60_000);
  const triggered = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(triggered.status).toBe(200);
  await reportAttempt(server, agent, cases);
  return triggered.body.execution.id;
}

async function executionTests(id = executionId, headers: Record<string, string> = ci) {
  const listed = await call(`${server.baseUrl}/executions/${id}/tests`, { headers });
  expect(listed.status).toBe(200);
  return listed.body.items as Array<{ id: string; name: string; quarantined: boolean }>;
}

async function historyItems() {
  const listed = await call(`${server.baseUrl}/tests?test_plan_id=${planId}`, { headers: ci });
  expect(listed.status).toBe(200);
  return listed.body.items as Array<{ id: string; name: string; quarantined: boolean; quarantine: unknown }>;
}

/** The organization's audit events about tests, oldest first. */
async function testEvents() {
  const page = await call(`${server.baseUrl}/audit?limit=100`, { headers: { cookie: admin.cookie } });
  expect(page.status).toBe(200);
  return (page.body.items as Array<{ action: string; target: { type: string; id: string } }>)
    .filter((event) => event.target.type === "test")
    .reverse();
}

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  const issued = await server.createClient("acme", "ci");
  ciClientId = issued.client_id;
  ci = { "x-api-key": await server.token(issued) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  otherCi = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
  admin = await signIn("boss@acme.example", "admin");
  member = await signIn("ann@acme.example", "member");
  viewer = await signIn("vic@acme.example", "viewer");
  await registerBasicApp(server, ci);
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(created.status).toBe(201);
  planId = created.body.id;
  executionId = await run([
    ["paysWithCard", "failed"],
    ["addsToCart", "passed"],
  ]);
  for (const test of await executionTests()) ids[test.name] = test.id;
  expect(Object.keys(ids).sort()).toEqual(["addsToCart", "paysWithCard"]);
});
afterAll(() => server.close());

describe("PUT /v1/tests/{test_id}/quarantine", () => {
  it("quarantines a reported test, which GET /tests and GET /executions/{id}/tests then show", async () => {
    const testId = ids.paysWithCard as string;
    const before = server.clock.now();
    const { status, body } = await quarantine(testId, "Flaky on the payment sandbox: TB-123");
    expect(status).toBe(200);
    expect(body).toEqual({
      test_id: testId,
      test_plan_id: planId,
      classname: "com.example.CartTest",
      name: "paysWithCard",
      reason: "Flaky on the payment sandbox: TB-123",
      quarantined_by: ciClientId,
      quarantined_at: new Date(before).toISOString(),
    });

    const history = await historyItems();
    expect(history.find((t) => t.id === testId)).toMatchObject({ quarantined: true, quarantine: body });
    expect(history.find((t) => t.id === ids.addsToCart)).toMatchObject({
      quarantined: false,
      quarantine: null,
    });

    const tests = await executionTests();
    expect(tests.map((t) => [t.name, t.quarantined])).toEqual([
      ["paysWithCard", true],
      ["addsToCart", false],
    ]);
  });

  it("GET /tests lists a quarantined test that did not run in the window, with no last run, to release it", async () => {
    const testId = ids.paysWithCard as string;
    // The newest execution did not run it (its flow was disabled while it is fixed, say).
    await run([["addsToCart", "failed"]]);
    const listed = await call(`${server.baseUrl}/tests?test_plan_id=${planId}&window=1`, { headers: ci });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toMatchObject([
      { id: ids.addsToCart, runs: 1, failures: 1, last_status: "failed", quarantined: false },
      {
        id: testId,
        classname: "com.example.CartTest",
        name: "paysWithCard",
        runs: 0,
        failures: 0,
        flaky_rate: 0,
        p80_ms: null,
        last_status: null,
        last_execution_id: null,
        last_run_at: null,
        first_seen_at: null,
        new: false,
        quarantined: true,
        quarantine: { reason: "Flaky on the payment sandbox: TB-123" },
      },
    ]);
  });

  it("changes the reason on a second PUT, keeping who quarantined it and since when; both are audited", async () => {
    const testId = ids.addsToCart as string;
    const first = await quarantine(testId, "Times out on CI", asPerson(member));
    expect(first.status).toBe(200);
    expect(first.body.quarantined_by).toBe("ann@acme.example");
    server.clock.advance(5_000);
    const second = await quarantine(testId, "Times out on CI: TB-124", asPerson(admin));
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ...first.body, reason: "Times out on CI: TB-124" });

    const events = (await testEvents()).filter((e) => e.target.id === testId);
    expect(events).toMatchObject([
      {
        action: "test.quarantined",
        actor: { type: "person", id: "ann@acme.example" },
        details: { test_plan_id: planId, name: "addsToCart", reason: "Times out on CI" },
      },
      {
        action: "test.quarantined",
        actor: { type: "person", id: "boss@acme.example" },
        details: { reason: "Times out on CI: TB-124", previous_reason: "Times out on CI" },
      },
    ]);
    expect(await release(testId)).toMatchObject({ status: 204 });
  });

  it("refuses viewers and agents (403), and tests this organization never reported (404 test_not_found)", async () => {
    const testId = ids.addsToCart as string;
    const byViewer = await quarantine(testId, "no", asPerson(viewer));
    expect(byViewer.status).toBe(403);
    expect(byViewer.body).toMatchObject({ code: "forbidden", fix: expect.any(String) });
    expect((await release(testId, asPerson(viewer))).status).toBe(403);
    expect((await quarantine(testId, "no", agent)).status).toBe(403);

    const unknown = await quarantine(`t_${"0".repeat(24)}`, "never ran");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({
      code: "test_not_found",
      fix: expect.stringContaining("GET /v1/tests"),
    });
    const foreign = await quarantine(testId, "not ours", otherCi);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("test_not_found");
    expect((await historyItems()).find((t) => t.id === testId)?.quarantined).toBe(false);
  });

  it("refuses a missing, empty or too long reason and a malformed test id, saying which field", async () => {
    const testId = ids.addsToCart as string;
    for (const reason of [undefined, "", "x".repeat(501), 42]) {
      const refused = await quarantine(testId, reason);
      expect(refused.status, String(reason)).toBe(400);
      expect(refused.body).toMatchObject({ code: "invalid_request", errors: [{ path: "/reason" }] });
    }
    expect((await quarantine(testId, "x".repeat(500))).status).toBe(200);
    expect((await release(testId)).status).toBe(204);
    const malformed = await quarantine("tp_notatest", "why");
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].path).toBe("/test_id");
  });
});

describe("DELETE /v1/tests/{test_id}/quarantine", () => {
  it("releases a test (204), again without effect (204), audited once; another organization gets 404", async () => {
    const testId = ids.paysWithCard as string;
    expect((await quarantine(testId, "still flaky")).status).toBe(200);
    const foreign = await release(testId, otherCi);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("test_not_found");
    expect((await historyItems()).find((t) => t.id === testId)?.quarantined).toBe(true);

    const released = await release(testId, asPerson(member));
    expect(released.status).toBe(204);
    expect(released.body).toBe("");
    expect((await release(testId)).status).toBe(204);
    expect((await historyItems()).find((t) => t.id === testId)).toMatchObject({
      quarantined: false,
      quarantine: null,
    });
    expect((await executionTests()).every((t) => !t.quarantined)).toBe(true);
    const releases = (await testEvents()).filter(
      (e) => e.action === "test.unquarantined" && e.target.id === testId,
    );
    expect(releases).toMatchObject([
      { actor: { type: "person", id: "ann@acme.example" }, details: { reason: "still flaky" } },
    ]);

    const unknown = await release(`t_${"f".repeat(24)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("test_not_found");
  });

  it("a test first reported after the quarantine API existed can be quarantined, and shows in later runs", async () => {
    const later = await run([
      ["paysWithCard", "passed"],
      ["refundsOrder", "failed"],
    ]);
    const tests = await executionTests(later);
    const refundsOrder = tests.find((t) => t.name === "refundsOrder");
    expect(refundsOrder?.id).toMatch(/^t_[0-9a-f]{24}$/);
    expect((await quarantine(refundsOrder?.id as string, "new and flaky")).status).toBe(200);
    expect((await executionTests(later)).map((t) => [t.name, t.quarantined])).toEqual([
      ["paysWithCard", false],
      ["refundsOrder", true],
    ]);
    // Another organization reads neither the execution nor the quarantine.
    expect((await call(`${server.baseUrl}/executions/${later}/tests`, { headers: otherCi })).status).toBe(
      404,
    );
  });
});
