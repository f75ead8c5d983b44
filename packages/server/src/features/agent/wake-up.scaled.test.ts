import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

// Scaled configuration only: two API instances on one PostgreSQL database. Waiting claims look again only
// every 60 s here, so a claim answered within its 20 s wait was woken by the other instance's trigger.

const apk = fileURLToPath(new URL("../../../test/fixtures/binaries/app-basic.apk", import.meta.url));

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
  await call(`${server.baseUrl}/apps`, {
    headers: ci,
    json: { package_name: "com.example.basic", platform: "android" },
  });
  const upload = await fetch(`${server.baseUrl}/apps/com.example.basic/versions/1.2.3`, {
    method: "PUT",
    headers: ci,
    body: await readFile(apk),
  });
  expect(upload.status).toBe(201);
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
