import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../test/harness.ts";

// Scaled configuration only (Vitest project `scaled`): two API instances on one PostgreSQL database, one
// Redis and one S3 endpoint. What only several instances can show: shared limits, shared blobs, wake-ups
// across instances, and serving on while Redis is away. Waiting claims look again only every 60 s here, so
// a claim answered within its 20 s wait was woken by the other instance's trigger.

const apk = fileURLToPath(new URL("../test/fixtures/binaries/app-basic.apk", import.meta.url));

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({
    claimPollIntervalMs: 60_000,
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  expect(server.instances).toHaveLength(2);
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

describe("two API instances", () => {
  it("wake a claim waiting on one instance when the trigger lands on the other", async () => {
    const [first, second] = server.instances;
    if (!first || !second) throw new Error("two instances expected");
    const plan = await call(`${first.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "wake",
        package_name: "com.example.basic",
        steps: [{ type: "inspect", expect: { debuggable: false } }],
      },
    });
    const waiting = call(`${second.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "far-away", devices: [], wait_seconds: 20 },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const triggered = await call(`${first.baseUrl}/testplan/run`, {
      headers: ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
    });
    const claimed = await waiting;
    expect(claimed.status).toBe(200);
    expect(claimed.body.job.execution_id).toBe(triggered.body.execution.id);
  });

  it("serves a binary uploaded through one instance from the other", async () => {
    const [first, second] = server.instances;
    if (!first || !second) throw new Error("two instances expected");
    const original = await readFile(apk);
    for (const instance of [first, second]) {
      const response = await fetch(`${instance.baseUrl}/apps/com.example.basic/versions/1.2.3/binary`, {
        headers: ci,
      });
      expect(Buffer.from(await response.arrayBuffer()).equals(original)).toBe(true);
    }
  });
});

describe("the rate limit across instances", () => {
  it("admits 20 of a burst of 40 from one client spread over both instances", async () => {
    const limited = await startTestServer();
    try {
      const [first, second] = limited.instances;
      if (!first || !second) throw new Error("two instances expected");
      const headers = { "x-api-key": await limited.token(await limited.createClient("acme", "ci")) };
      // The token call counted too: one of the client's 20 is spent already.
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => fetch(`${(i % 2 ? second : first).baseUrl}/me`, { headers })),
      );
      const admitted = answers.filter((a) => a.status === 200).length;
      expect(admitted).toBeGreaterThanOrEqual(18);
      expect(admitted).toBeLessThanOrEqual(20);
      expect(answers.filter((a) => a.status === 429).length).toBe(40 - admitted);
    } finally {
      await limited.close();
    }
  });

  it("keeps serving when Redis does not answer, and says the limiter is degraded", async () => {
    const cut = await startTestServer({ env: { TESTBAY_REDIS_URL: "redis://127.0.0.1:1" } });
    try {
      const headers = { "x-api-key": await cut.token(await cut.createClient("acme", "ci")) };
      for (let i = 0; i < 30; i++) {
        expect((await fetch(`${cut.baseUrl}/me`, { headers })).status).toBe(200);
      }
      const ready = await call(`${cut.origin}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe("degraded");
      expect(ready.body.checks).toContainEqual(expect.objectContaining({ name: "rate_limiter", ok: false }));
    } finally {
      await cut.close();
    }
  });
});
