import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportAttempt } from "../../../test/agent-attempt.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

/**
 * What a quarantine does to executions (API.md §6): a quarantined test still runs and is reported, but its failure
 * does not fail its run (no other attempt either) nor its execution; summary.quarantined_failures counts it.
 */

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let planId: string;

type Case = [name: string, status: "passed" | "failed"];

/** One attempt: the agent reports `cases` and completes failed if one failed, as agents do. */
const attempt = (cases: Case[]) => reportAttempt(server, agent, cases);

/** An execution of the plan (max_attempts 2): every attempt reports `cases`. Returns it and its attempts' ends. */
async function execution(cases: Case[]) {
  server.clock.advance(60_000);
  const triggered = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(triggered.status).toBe(200);
  const ends = [await attempt(cases)];
  if (ends[0]?.requeued) ends.push(await attempt(cases));
  const read = await call(`${server.baseUrl}/executions/${triggered.body.execution.id}`, { headers: ci });
  return { execution: read.body, ends };
}

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      max_attempts: 2,
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(created.status).toBe(201);
  planId = created.body.id;
});
afterAll(() => server.close());

describe("a quarantined test's failure", () => {
  let paysWithCard: string;

  beforeAll(async () => {
    const first = await execution([
      ["paysWithCard", "failed"],
      ["addsToCart", "passed"],
    ]);
    // Before the quarantine the failure fails the run, which is tried again, and the execution.
    expect(first.ends.map((end) => [end.status, end.requeued])).toEqual([
      ["failed", true],
      ["failed", false],
    ]);
    expect(first.execution).toMatchObject({ status: "failed", summary: { failed: 1 } });
    expect(first.execution.summary.quarantined_failures ?? 0).toBe(0);
    const tests = await call(`${server.baseUrl}/executions/${first.execution.id}/tests`, { headers: ci });
    paysWithCard = tests.body.items.find((t: { name: string }) => t.name === "paysWithCard").id;
    const put = await call(`${server.baseUrl}/tests/${paysWithCard}/quarantine`, {
      method: "PUT",
      headers: ci,
      json: { reason: "Sandbox flaky: TB-7" },
    });
    expect(put.status).toBe(200);
  });

  it("leaves its run and execution passed, without another attempt, and is counted in quarantined_failures", async () => {
    const { execution: passed, ends } = await execution([
      ["paysWithCard", "failed"],
      ["addsToCart", "passed"],
    ]);
    expect(ends).toMatchObject([{ status: "passed", requeued: false }]);
    expect(passed).toMatchObject({
      status: "passed",
      summary: { tests: 2, passed: 1, failed: 1, quarantined_failures: 1 },
    });
    // Still run and reported: the failure is listed, marked quarantined.
    const failed = await call(`${server.baseUrl}/executions/${passed.id}/tests?status=failed`, {
      headers: ci,
    });
    expect(failed.body.items).toMatchObject([{ id: paysWithCard, status: "failed", quarantined: true }]);

    // The JUnit report agrees with the verdict, so a CI job publishing it does not go red: skipped, not a
    // failure, with the quarantine and the failure both said.
    const junit = await fetch(`${server.baseUrl}/executions/${passed.id}/junit`, { headers: ci });
    const report = await junit.text();
    expect(report).toMatch(/<testsuites [^>]*tests="2" failures="0" errors="0" skipped="1">/);
    expect(report).toMatch(
      /<skipped message="Quarantined by [^"]+ \(Sandbox flaky: TB-7\); it failed: paysWithCard broke"\/>/,
    );
    expect(report).not.toContain("<failure");
  });

  it("does not hide another test's failure", async () => {
    const { execution: failed } = await execution([
      ["paysWithCard", "failed"],
      ["addsToCart", "failed"],
    ]);
    expect(failed).toMatchObject({ status: "failed", summary: { failed: 2, quarantined_failures: 1 } });
  });

  it("fails executions again once the test is released", async () => {
    const released = await call(`${server.baseUrl}/tests/${paysWithCard}/quarantine`, {
      method: "DELETE",
      headers: ci,
    });
    expect(released.status).toBe(204);
    const { execution: failed } = await execution([
      ["paysWithCard", "failed"],
      ["addsToCart", "passed"],
    ]);
    expect(failed).toMatchObject({ status: "failed", summary: { failed: 1 } });
    expect(failed.summary.quarantined_failures ?? 0).toBe(0);
  });
});
