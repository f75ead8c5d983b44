// The "Shop" plan the test-history and flaky-tests pages are tested on (test-history.int.test.ts,
// flaky-tests.int.test.ts): a server with roomy limits, its ci client, an agent client, and a plan of one Maestro
// step on a Pixel 7 with max_attempts 2, whose runs the tests report through the agent protocol, test case by
// test case, as an agent would.
import { expect } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { ciHeaders, organization } from "./sample-data.ts";

export type Case = [name: string, status: "passed" | "failed"];

const device = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

export interface ShopSite {
  server: TestServer;
  ci: Record<string, string>;
  planId: string;
  /** Triggers a run of the plan (the server's clock a minute on first: the history orders runs by trigger time). */
  trigger(): Promise<string>;
  /** The agent claims the next queued run: its lease. */
  claim(): Promise<string>;
  /** The agent reports `cases` on the lease, numbered from `from`. */
  report(lease: string, cases: Case[], from?: number): Promise<void>;
  /** The agent completes the lease, failed when a case failed; whether the server re-queued the attempt. */
  complete(lease: string, cases: Case[]): Promise<{ requeued?: boolean }>;
}

export async function openShopSite(): Promise<ShopSite> {
  const server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  const ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  const agent = { "x-api-key": await server.token(await server.createClient(organization, "agent")) };
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "Shop",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      max_attempts: 2,
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(plan.status).toBe(201);
  const planId: string = plan.body.id;

  return {
    server,
    ci,
    planId,
    async trigger() {
      server.clock.advance(60_000);
      const run = await call(`${server.baseUrl}/testplan/run`, {
        headers: ci,
        json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
      });
      expect(run.status).toBe(200);
      return run.body.execution.id;
    },
    async claim() {
      const claimed = await call(`${server.baseUrl}/agent/claim`, {
        headers: agent,
        json: { agent_id: "rack-1", devices: [device], step_types: ["maestro"] },
      });
      expect(claimed.status).toBe(200);
      return claimed.body.job.lease_id;
    },
    async report(lease, cases, from = 0) {
      const events = cases.map(([name, status], i) => ({
        seq: from + i,
        type: "test_case",
        step_index: 0,
        classname: "com.example.ShopTest",
        name,
        status,
        duration_ms: 1500,
        message: status === "failed" ? `${name} broke` : null,
      }));
      const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
        headers: agent,
        json: { events },
      });
      expect(sent.status).toBe(200);
    },
    async complete(lease, cases) {
      const failed = cases.some(([, status]) => status === "failed");
      const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
        headers: agent,
        json: { status: failed ? "failed" : "passed" },
      });
      expect(done.status).toBe(200);
      return done.body as { requeued?: boolean };
    },
  };
}
