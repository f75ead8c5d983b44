// Results of a sharded run: two shards of one device entry can run on the same device one after the other, so
// their files have the same names (device-SERIAL/logcat.txt) in the same attempt, and their log lines the same
// device position and attempt. The shard tells them apart.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
const logcat = "device-emulator-5554/logcat.txt";

/** Claims the next shard on the one device, logs and stores `text` as its logcat, and completes it. */
async function runShardOnTheDevice(text: string): Promise<number> {
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [pixel], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  const { lease_id: lease, device_run: run } = claimed.body.job;
  const line = { seq: 1, type: "log", at: new Date().toISOString(), stream: "agent", line: text };
  const logged = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
    headers: agent,
    json: { events: [line] },
  });
  expect(logged.status).toBe(200);
  const put = await fetch(`${server.baseUrl}/agent/jobs/${lease}/artifacts/${logcat}`, {
    method: "PUT",
    headers: { ...agent, "content-type": "text/plain" },
    body: text,
  });
  expect(put.status).toBe(201);
  const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
    headers: agent,
    json: { status: "passed" },
  });
  expect(done.status).toBe(200);
  return run.shard;
}

beforeAll(async () => {
  server = await startTestServer();
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

describe("two shards that ran on the same device", () => {
  it("have their artifacts listed and downloaded per shard, their log and JUnit suite one each", async () => {
    const plan = await call(`${server.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "two shards",
        package_name: "com.example.basic",
        devices: [{ platform: "android" }],
        steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"], shards: 2 }],
      },
    });
    expect(plan.status).toBe(201);
    const run = await call(`${server.baseUrl}/testplan/run`, {
      headers: ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
    });
    expect(run.status).toBe(200);
    const id = run.body.execution.id;
    const shards = [await runShardOnTheDevice("first shard's log"), await runShardOnTheDevice("second's")];
    expect(shards.sort()).toEqual([0, 1]);

    const listed = await call(`${server.baseUrl}/executions/${id}/artifacts`, { headers: ci });
    expect(
      listed.body.items.map((a: { name: string; shard: number; url: string }) => [a.name, a.shard, a.url]),
    ).toEqual([
      [logcat, 0, `/v1/executions/${id}/artifacts/${logcat}?device=0&shard=0&attempt=1`],
      [logcat, 1, `/v1/executions/${id}/artifacts/${logcat}?device=0&shard=1&attempt=1`],
    ]);
    const texts: string[] = [];
    for (const item of listed.body.items) {
      const download = await fetch(`${server.baseUrl}${item.url.slice("/v1".length)}`, { headers: ci });
      expect(download.status).toBe(200);
      texts.push(await download.text());
    }
    expect(new Set(texts)).toEqual(new Set(["first shard's log", "second's"]));
    // Without ?shard= the first device run that has it answers, as before sharding.
    const plain = await fetch(`${server.baseUrl}/executions/${id}/artifacts/${logcat}`, { headers: ci });
    expect(await plain.text()).toBe(texts[0]);

    // The log: a section per shard, in shard order, each with its own lines.
    const log = await fetch(`${server.baseUrl}/executions/${id}/log`, { headers: ci });
    const shardOf = Object.fromEntries(
      listed.body.items.map((a: { shard: number }, i: number) => [a.shard, texts[i]]),
    );
    const lines = (await log.text()).split("\n");
    expect(lines).toEqual([
      "=== device 1, shard 1 of 2, attempt 1 ===",
      expect.stringMatching(new RegExp(` \\[agent\\] ${shardOf[0]}$`)),
      "=== device 1, shard 2 of 2, attempt 1 ===",
      expect.stringMatching(new RegExp(` \\[agent\\] ${shardOf[1]}$`)),
      "",
    ]);

    // The JUnit report: a testsuite per shard, named so that a CI test reporter keeps them apart.
    const junit = await (await fetch(`${server.baseUrl}/executions/${id}/junit`, { headers: ci })).text();
    expect([...junit.matchAll(/<testsuite name="([^"]+)"/g)].map((m) => m[1])).toEqual([
      "device 1, shard 1 of 2: android (attempt 1)",
      "device 1, shard 2 of 2: android (attempt 1)",
    ]);
  });
});
