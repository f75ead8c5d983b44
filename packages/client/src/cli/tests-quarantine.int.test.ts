// `testbay tests quarantine` and `testbay tests release` against a real server: a test an agent reported is
// quarantined with a reason and released, as a person reads it and as --json; a test never reported is refused
// with the server's code and fix (exit 4).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli } from "../../test/in-process-cli.ts";

let server: TestServer;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let token: string;
let testId: string;
let executionId: string;

const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

/** A run of a new plan in which com.example.CartTest#paysWithCard failed; returns that test's id. */
async function reportedFailure(): Promise<string> {
  const headers = { "x-api-key": token };
  const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers,
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(plan.status).toBe(201);
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  const device = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [device], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  const event = {
    seq: 1,
    type: "test_case",
    step_index: 0,
    classname: "com.example.CartTest",
    name: "paysWithCard",
    status: "failed",
  };
  const sent = await call(`${server.baseUrl}/agent/jobs/${claimed.body.job.lease_id}/events`, {
    headers: agent,
    json: { events: [event] },
  });
  expect(sent.status).toBe(200);
  executionId = run.body.execution.id;
  const tests = await call(`${server.baseUrl}/executions/${executionId}/tests`, { headers });
  return tests.body.items[0].id;
}

/** Whether the run's page shows the test quarantined. */
async function quarantined(): Promise<boolean> {
  const tests = await call(`${server.baseUrl}/executions/${executionId}/tests`, {
    headers: { "x-api-key": token },
  });
  return tests.body.items[0].quarantined;
}

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-tests-quarantine-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
  await registerBasicApp(server, { "x-api-key": token });
  testId = await reportedFailure();
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("testbay tests", () => {
  it("quarantine says what it did and how to undo it; --json prints the quarantine", async () => {
    const done = await cli(["tests", "quarantine", testId, "--reason", "Flaky on the sandbox: TB-1"]);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain(`Quarantined com.example.CartTest#paysWithCard (${testId}) of plan tp_`);
    expect(done.stderr).toContain(`Release it with testbay tests release ${testId}`);

    const again = await cli([
      "tests",
      "quarantine",
      testId,
      "--reason",
      "Flaky on the sandbox: TB-2",
      "--json",
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).quarantine).toMatchObject({
      test_id: testId,
      classname: "com.example.CartTest",
      name: "paysWithCard",
      reason: "Flaky on the sandbox: TB-2",
      quarantined_by: ci.client_id,
    });
    expect(await quarantined()).toBe(true);
  });

  it("release says the test fails runs again, also when it was not quarantined", async () => {
    for (let i = 0; i < 2; i++) {
      const released = await cli(["tests", "release", testId]);
      expect(released.code, released.stderr).toBe(0);
      expect(released.stderr).toContain(`${testId} is not quarantined: its failures fail runs.`);
    }
    expect(await quarantined()).toBe(false);
  });

  it("refuses a test never reported (exit 4, the server's code and fix) and a missing reason (exit 2)", async () => {
    const unknown = await cli(["tests", "quarantine", `t_${"0".repeat(24)}`, "--reason", "why"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain("test_not_found");
    expect(unknown.stderr).toContain("GET /v1/tests");
    const noReason = await cli(["tests", "quarantine", testId]);
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain("--reason");
  });
});
