import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

// A failed test names the video segment recording when it failed and how far into it that was
// (video_offset_ms), so the run's page opens the video at the failure: from the agent's events to GET …/tests,
// and the segment itself served in ranges, which a player seeking in it asks for.

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
const video = "device-emulator-5554/video/part-02.mp4";

async function claimedRun() {
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `video offset ${Math.random()}`,
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "rack-1", devices: [pixel], step_types: ["maestro"] },
  });
  expect(claimed.status).toBe(200);
  return { id: run.body.execution.id as string, lease: claimed.body.job.lease_id as string };
}

const testCase = (seq: number, name: string, extra: Record<string, unknown>) => ({
  seq,
  type: "test_case",
  step_index: 0,
  classname: "com.example.LoginTest",
  name,
  status: "failed",
  duration_ms: 900,
  message: `${name} broke`,
  ...extra,
});

const events = (lease: string, list: unknown[]) =>
  call(`${server.baseUrl}/agent/jobs/${lease}/events`, { headers: agent, json: { events: list } });

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

describe("a failure's place in its video", () => {
  it("keeps the agent's video_offset_ms on the test case, null when it sent none", async () => {
    const { id, lease } = await claimedRun();
    const sent = await events(lease, [
      testCase(1, "signsIn", { artifacts: [video], video_offset_ms: 73_250 }),
      testCase(2, "signsOut", { artifacts: [] }),
    ]);
    expect(sent.status).toBe(200);

    const { body } = await call(`${server.baseUrl}/executions/${id}/tests?status=failed`, { headers: ci });
    expect(
      body.items.map((t: { name: string; video_offset_ms: number | null }) => [t.name, t.video_offset_ms]),
    ).toEqual([
      ["signsIn", 73_250],
      ["signsOut", null],
    ]);
    expect(body.items[0].artifacts).toEqual([video]);
  });

  it("refuses an offset that is no length of time", async () => {
    const { lease } = await claimedRun();
    for (const offset of [-1, 1.5, "12"]) {
      const sent = await events(lease, [testCase(1, "signsIn", { video_offset_ms: offset })]);
      expect(sent.status).toBe(400);
      expect(sent.body.code).toBe("invalid_request");
    }
  });

  it("serves the segment in byte ranges, as a player seeking to the failure asks for it", async () => {
    const { id, lease } = await claimedRun();
    const bytes = Buffer.alloc(4096, 7);
    bytes.write("ftypisom", 4, "latin1");
    const put = await fetch(`${server.baseUrl}/agent/jobs/${lease}/artifacts/${video}`, {
      method: "PUT",
      headers: { ...agent, "content-type": "video/mp4" },
      body: bytes,
    });
    expect(put.status).toBe(201);

    const part = await fetch(`${server.baseUrl}/executions/${id}/artifacts/${video}?device=0&attempt=1`, {
      headers: { ...ci, range: "bytes=1024-2047" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-type")).toBe("video/mp4");
    expect(part.headers.get("content-range")).toBe("bytes 1024-2047/4096");
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(1024, 2048));
  });
});
