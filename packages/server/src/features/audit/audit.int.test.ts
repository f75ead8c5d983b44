import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

/** GET /v1/audit: who did what, written by the services the actions go through. */

let server: TestServer;
let ci: Record<string, string>;
let ciClientId: string;
let admin: { cookie: string; csrf: string };
let member: { cookie: string; csrf: string };

async function signIn(email: string, password: string) {
  const response = await call(`${server.origin}/auth/login`, { json: { email, password } });
  expect(response.status).toBe(200);
  return {
    cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    csrf: response.body.csrf_token as string,
  };
}

function change(session: { cookie: string; csrf: string }, method: string, path: string, json?: unknown) {
  return call(`${server.origin}${path}`, {
    method,
    headers: { cookie: session.cookie, "x-csrf-token": session.csrf },
    ...(json === undefined ? {} : { json }),
  });
}

/**
 * Moves the test clock on a second: events of the same millisecond have no order among themselves (IDs
 * are random after their time part), so each action here happens at its own time, as people's do.
 */
const tick = () => server.clock.advance(1000);

/** Every event of the admin's organization, newest first, read page by page (`limit` per page). */
async function allEvents(limit: number) {
  const events = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=${limit}&cursor=${cursor}` : `?limit=${limit}`;
    const page = await call(`${server.origin}/v1/audit${query}`, { headers: { cookie: admin.cookie } });
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.items.length).toBeLessThanOrEqual(limit);
    events.push(...page.body.items);
    cursor = page.body.next_cursor;
  } while (cursor);
  return events;
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  const issued = await server.createClient("acme", "ci");
  ciClientId = issued.client_id;
  ci = { "x-api-key": await server.token(issued) };
  const people = server.app.services.people;
  tick();
  const adminAccount = await people.createUser({ email: "boss@acme.example", role: "admin", org: "acme" });
  tick();
  const memberAccount = await people.createUser({ email: "ann@acme.example", role: "member", org: "acme" });
  admin = await signIn(adminAccount.email, adminAccount.password);
  member = await signIn(memberAccount.email, memberAccount.password);
  await registerBasicApp(server, ci);
  tick();
  // Another organization's doings stay there.
  await server.createClient("other", "ci");
});
afterAll(() => server.close());

describe("the audit log", () => {
  it("names who created, changed, archived, restored and deleted plans, triggered and cancelled runs, and managed clients and people", async () => {
    tick();
    const created = await call(`${server.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "smoke",
        package_name: "com.example.basic",
        steps: [{ type: "inspect", expect: { debuggable: false } }],
      },
    });
    expect(created.status).toBe(201);
    const plan = created.body.id;
    tick();
    expect((await change(member, "PATCH", `/v1/testplans/${plan}`, { name: "smoke 2" })).status).toBe(200);
    tick();
    const triggered = await change(member, "POST", "/v1/testplan/run", {
      package_name: "com.example.basic",
      version: "1.2.3",
      test_plan_id: plan,
    });
    expect(triggered.status).toBe(200);
    const execution = triggered.body.execution.id;
    tick();
    expect((await change(member, "POST", `/v1/executions/${execution}/cancel`)).status).toBe(200);
    // Cancelling what has ended changes nothing, and is not logged again.
    expect((await change(member, "POST", `/v1/executions/${execution}/cancel`)).status).toBe(200);
    tick();
    expect((await change(admin, "POST", `/v1/testplans/${plan}/archive`)).status).toBe(200);
    tick();
    expect((await change(admin, "POST", `/v1/testplans/${plan}/restore`)).status).toBe(200);
    tick();
    expect((await change(admin, "DELETE", `/v1/testplans/${plan}`)).status).toBeLessThan(300);
    tick();
    await server.app.services.clients.rotateSecret(ciClientId);
    tick();
    await server.app.services.people.createUser({ email: "new@acme.example", role: "viewer", org: "acme" });

    const events = await allEvents(3);
    const lines = events.map(
      (e) => `${e.actor.type}:${e.actor.id} ${e.action} ${e.target.type}:${e.target.id}`,
    );
    expect(lines).toEqual([
      "server:testbay-server user.created user:new@acme.example",
      `server:testbay-server client.rotated client:${ciClientId}`,
      `person:boss@acme.example test_plan.deleted test_plan:${plan}`,
      `person:boss@acme.example test_plan.restored test_plan:${plan}`,
      `person:boss@acme.example test_plan.archived test_plan:${plan}`,
      `person:ann@acme.example execution.cancelled execution:${execution}`,
      `person:ann@acme.example execution.triggered execution:${execution}`,
      `person:ann@acme.example test_plan.updated test_plan:${plan}`,
      `client:${ciClientId} test_plan.created test_plan:${plan}`,
      "server:testbay-server user.created user:ann@acme.example",
      "server:testbay-server user.created user:boss@acme.example",
      `server:testbay-server client.created client:${ciClientId}`,
    ]);
    expect(events[6]).toMatchObject({
      id: expect.stringMatching(/^aud_/),
      at: expect.any(String),
      details: { test_plan_id: plan, package_name: "com.example.basic", version: "1.2.3" },
    });
    expect(events[8].details).toEqual({ name: "smoke", package_name: "com.example.basic" });
    // The ids of all pages together are unique: no event is shown twice across cursors.
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it("is for admins only", async () => {
    const byMember = await call(`${server.origin}/v1/audit`, { headers: { cookie: member.cookie } });
    expect(byMember.status).toBe(403);
    expect(byMember.body.fix).toContain("admin role");
    // (The first ci client's secret was rotated above, which revoked its token: a new client.)
    const ciClient = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
    expect((await call(`${server.baseUrl}/audit`, { headers: ciClient })).status).toBe(403);
    tick();
    const adminClient = { "x-api-key": await server.token(await server.createClient("acme", "admin")) };
    const byClient = await call(`${server.baseUrl}/audit?limit=1`, { headers: adminClient });
    expect(byClient.status).toBe(200);
    expect(byClient.body.items[0].action).toBe("client.created");
    expect(byClient.body.next_cursor).toEqual(expect.any(String));
  });
});
