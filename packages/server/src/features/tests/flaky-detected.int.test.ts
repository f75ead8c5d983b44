import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pixel7, reportAttempt, type Tries } from "../../../test/agent-attempt.ts";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import { eventsOf, type StoredEvent } from "../events/index.ts";

/**
 * test.flaky_detected (issue 15): an execution that finishes with a test that passed on a retry after failing
 * appends one event for it to the outbox, unless the test was already flaky in the plan's window; in the
 * transaction that finishes the execution, read back here through the events repository.
 */

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let planId: string;
let twoDevicesPlanId: string;

const pixel = pixel7;

/** Triggers an execution of `plan`; its ID. */
async function trigger(plan: string): Promise<string> {
  server.clock.advance(60_000);
  const triggered = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(triggered.status).toBe(200);
  return triggered.body.execution.id;
}

/** One execution of the plan, one attempt: the agent reports every try and completes by the final statuses. */
async function execution(tests: Tries[]): Promise<string> {
  const id = await trigger(planId);
  await attempt(pixel, tests);
  return id;
}

/** A device run's only attempt on `device`: every try reported, completed by the final statuses. */
async function attempt(device: typeof pixel, tests: Tries[]): Promise<void> {
  expect(await reportAttempt(server, agent, tests, { device })).toMatchObject({ requeued: false });
}

async function organizationId(name: string): Promise<string> {
  const row = await server.app.services.database.db
    .selectFrom("organizations")
    .select("id")
    .where("name", "=", name)
    .executeTakeFirstOrThrow();
  return row.id;
}

async function flakyEvents(org: string): Promise<StoredEvent[]> {
  return eventsOf(server.app.services.database.db, await organizationId(org), {
    type: "test.flaky_detected",
  });
}

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await server.createClient("globex", "ci");
  await registerBasicApp(server, ci);
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [
        { type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"], retry_failed_tests: 1 },
      ],
    },
  });
  expect(created.status).toBe(201);
  planId = created.body.id;
});
afterAll(() => server.close());

describe("test.flaky_detected", () => {
  let flakyExecution: string;

  it("is not appended for an execution without flaky tests, nor for a test that failed on every try", async () => {
    await execution([
      ["paysWithCard", "passed"],
      ["addsToCart", "passed"],
    ]);
    await execution([
      ["paysWithCard", "passed"],
      ["addsToCart", "failed", "failed"],
    ]);
    expect(await flakyEvents("acme")).toEqual([]);
  });

  it("is appended once for a test never flaky before that fails and then passes on its retry, with its history", async () => {
    flakyExecution = await execution([
      ["paysWithCard", "failed", "passed"],
      ["addsToCart", "passed"],
    ]);
    const read = await call(`${server.baseUrl}/executions/${flakyExecution}`, { headers: ci });
    expect(read.body).toMatchObject({ status: "passed", summary: { tests: 2, flaky: 1 } });
    const tests = await call(`${server.baseUrl}/executions/${flakyExecution}/tests`, { headers: ci });
    const paysWithCard = tests.body.items.find((t: { name: string }) => t.name === "paysWithCard");
    expect(paysWithCard).toMatchObject({ flaky: true, status: "passed" });

    const events = await flakyEvents("acme");
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
      type: "test.flaky_detected",
      subjectId: paysWithCard.id,
      createdAt: read.body.finished_at,
      data: {
        test_id: paysWithCard.id,
        test_plan_id: planId,
        classname: "com.example.CartTest",
        name: "paysWithCard",
        execution_id: flakyExecution,
        // Three executions of the plan so far, flaky in one of them.
        runs: 3,
        flaky_runs: 1,
        flaky_rate: 0.333,
        test: { id: paysWithCard.id, runs: 3, flaky_runs: 1, flaky_rate: 0.333, last_status: "passed" },
      },
    });
    // The same history GET /tests shows for the test now.
    const listed = await call(`${server.baseUrl}/tests?test_plan_id=${planId}`, { headers: ci });
    const history = listed.body.items.find((t: { id: string }) => t.id === paysWithCard.id);
    expect(history).toMatchObject({ runs: 3, flaky_runs: 1, flaky_rate: 0.333 });
  });

  it("is not appended again while the test is flaky in the window before", async () => {
    await execution([
      ["paysWithCard", "failed", "passed"],
      ["addsToCart", "passed"],
    ]);
    const events = await flakyEvents("acme");
    expect(events.map((event) => event.data.execution_id)).toEqual([flakyExecution]);
  });

  it("is appended for another test of the plan turning flaky in the same execution as a known one", async () => {
    const both = await execution([
      ["paysWithCard", "failed", "passed"],
      ["addsToCart", "failed", "passed"],
    ]);
    const events = await flakyEvents("acme");
    expect(events.map((event) => [event.data.name, event.data.execution_id])).toEqual([
      ["paysWithCard", flakyExecution],
      ["addsToCart", both],
    ]);
  });

  it("is appended when the execution is finished by a device run without flaky tests after one with them", async () => {
    const created = await call(`${server.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "two devices",
        package_name: "com.example.basic",
        devices: [
          { platform: "android", model: "Pixel 7" },
          { platform: "android", model: "Pixel 8" },
        ],
        steps: [
          { type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"], retry_failed_tests: 1 },
        ],
      },
    });
    expect(created.status).toBe(201);
    twoDevicesPlanId = created.body.id;
    const id = await trigger(twoDevicesPlanId);
    await attempt(pixel, [["signsIn", "failed", "passed"]]);
    // Still running: the other device's run has not ended, so nothing is detected yet.
    expect((await flakyEvents("acme")).filter((event) => event.data.execution_id === id)).toEqual([]);
    await attempt({ ...pixel, serial: "emulator-5556", model: "Pixel 8" }, [["signsIn", "passed"]]);
    const read = await call(`${server.baseUrl}/executions/${id}`, { headers: ci });
    expect(read.body).toMatchObject({ status: "passed", summary: { flaky: 1 } });
    const events = (await flakyEvents("acme")).filter((event) => event.data.execution_id === id);
    expect(events).toMatchObject([
      { data: { name: "signsIn", test_plan_id: created.body.id, runs: 1, flaky_runs: 1, flaky_rate: 1 } },
    ]);
  });

  it("is appended when a cancel finishes the execution after a device run found a newly flaky test", async () => {
    const id = await trigger(twoDevicesPlanId);
    await attempt(pixel, [["opensSettings", "failed", "passed"]]);
    const cancelled = await call(`${server.baseUrl}/executions/${id}/cancel`, {
      method: "POST",
      headers: ci,
    });
    expect(cancelled.status).toBeLessThan(300);
    const read = await call(`${server.baseUrl}/executions/${id}`, { headers: ci });
    expect(read.body).toMatchObject({ status: "cancelled", summary: { flaky: 1 } });
    const events = (await flakyEvents("acme")).filter((event) => event.data.execution_id === id);
    expect(events).toMatchObject([{ data: { name: "opensSettings", test_plan_id: twoDevicesPlanId } }]);
  });

  it("is appended when a lapsed lease finishes the execution after a device run found a newly flaky test", async () => {
    const id = await trigger(twoDevicesPlanId);
    await attempt(pixel, [["rotatesScreen", "failed", "passed"]]);
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: {
        agent_id: "rack-2",
        devices: [{ ...pixel, serial: "emulator-5556", model: "Pixel 8" }],
        step_types: ["maestro"],
      },
    });
    expect(claimed.status).toBe(200);
    // Its agent is never heard from again: the sweep ends its only attempt, which finishes the execution.
    server.clock.advance(server.config.leaseTtlSeconds * 1000 + 1);
    await server.app.services.agents.sweep();
    const read = await call(`${server.baseUrl}/executions/${id}`, { headers: ci });
    expect(read.body).toMatchObject({ status: "errored", summary: { flaky: 1 } });
    const events = (await flakyEvents("acme")).filter((event) => event.data.execution_id === id);
    expect(events).toMatchObject([{ data: { name: "rotatesScreen", test_plan_id: twoDevicesPlanId } }]);
  });

  it("is appended once when two executions of the plan turn one test flaky and finish at the same moment", async () => {
    const created = await call(`${server.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "finishing together",
        package_name: "com.example.basic",
        devices: [{ platform: "android" }],
        steps: [
          { type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"], retry_failed_tests: 1 },
        ],
      },
    });
    expect(created.status).toBe(201);
    // A few rounds, a new test each, so that the two completions really overlap in some of them.
    for (let round = 0; round < 4; round++) {
      const name = `syncsCart${round}`;
      const executions = [await trigger(created.body.id), await trigger(created.body.id)];
      const leases: string[] = [];
      for (const serial of ["emulator-5570", "emulator-5572"]) {
        const claimed = await call(`${server.baseUrl}/agent/claim`, {
          headers: agent,
          json: { agent_id: `rack-${serial}`, devices: [{ ...pixel, serial }], step_types: ["maestro"] },
        });
        expect(claimed.status).toBe(200);
        const lease = claimed.body.job.lease_id;
        const tries = ["failed", "passed"].map((status, retry) => ({
          seq: retry + 1,
          type: "test_case",
          step_index: 0,
          classname: "com.example.CartTest",
          name,
          status,
          retry,
          duration_ms: 1000,
        }));
        const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
          headers: agent,
          json: { events: tries },
        });
        expect(sent.status).toBe(200);
        leases.push(lease);
      }
      const completed = await Promise.all(
        leases.map((lease) =>
          call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
            headers: agent,
            json: { status: "passed" },
          }),
        ),
      );
      expect(completed.map((done) => done.body.execution_status)).toEqual(["passed", "passed"]);
      const events = (await flakyEvents("acme")).filter((event) => event.data.name === name);
      expect(events).toHaveLength(1);
      expect(executions).toContain(events[0]?.data.execution_id);
    }
  });

  it("is not seen by another organization", async () => {
    expect(await flakyEvents("globex")).toEqual([]);
    expect(await eventsOf(server.app.services.database.db, await organizationId("globex"))).toEqual([]);
  });
});
