import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../../test/harness.ts";

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

async function plan(step: Record<string, unknown>): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `instrumentation ${JSON.stringify(step)}`,
      package_name: "com.example.basic",
      devices: [{ platform: "android" }],
      steps: [{ type: "instrumentation", ...step }],
    },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

const batch = (version: string, ids: string[]) =>
  call(`${server.baseUrl}/testplan/run/batch`, {
    headers: ci,
    json: { package_name: "com.example.basic", version, test_plan_ids: ids },
  });

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, ci, "1.0.0");
  await registerBasicApp(server, ci, "2.0.0");
  await uploadBasicTestPackage(server, ci, "2.0.0");
});
afterAll(() => server.close());

describe("triggering an instrumentation plan", () => {
  it("needs the version's test package, and says how to upload it", async () => {
    const id = await plan({});
    const { status, body } = await batch("1.0.0", [id]);
    expect(status).toBe(404);
    expect(body.failed_executions).toEqual([
      expect.objectContaining({ test_plan_id: id, status: 404, code: "test_package_not_found" }),
    ]);
    expect(body.failed_executions[0].fix).toContain(
      "PUT /v1/apps/com.example.basic/versions/1.0.0/test-package",
    );
    expect(body.failed_executions[0].fix).toContain("--test-file");
  });

  it("fills in test_package and runner from the test package, and hands it to the agent", async () => {
    const id = await plan({});
    const { status, body } = await batch("2.0.0", [id]);
    expect(status).toBe(200);
    const execution = body.executions[0];
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "a1", devices: [pixel], step_types: ["instrumentation"] },
    });
    expect(claimed.status).toBe(200);
    const job = claimed.body.job;
    expect(job.execution_id).toBe(execution.id);
    expect(job.plan.steps[0]).toMatchObject({
      type: "instrumentation",
      test_package: "com.example.basic.test",
      runner: "androidx.test.runner.AndroidJUnitRunner",
    });
    expect(job.test_package).toMatchObject({
      url: "/v1/apps/com.example.basic/versions/2.0.0/test-package/binary",
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      test: {
        package_name: "com.example.basic.test",
        target_package: "com.example.basic",
        runner: "androidx.test.runner.AndroidJUnitRunner",
      },
    });
    const download = await fetch(`${server.origin}${job.test_package.url}`, { headers: agent });
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBe(job.test_package.size_bytes);
    await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/complete`, {
      headers: agent,
      json: { status: "cancelled" },
    });
  });

  it("refuses a plan that names another test package or runner, naming both", async () => {
    const other = await plan({ test_package: "com.example.other.test" });
    const runner = await plan({ runner: "com.example.CustomRunner" });
    const same = await plan({
      test_package: "com.example.basic.test",
      runner: "androidx.test.runner.AndroidJUnitRunner",
    });
    const { status, body } = await batch("2.0.0", [other, runner, same]);
    expect(status).toBe(207);
    expect(body.executions).toHaveLength(1);
    expect(body.failed_executions).toEqual([
      expect.objectContaining({ test_plan_id: other, status: 400, code: "test_package_mismatch" }),
      expect.objectContaining({ test_plan_id: runner, status: 400, code: "test_package_mismatch" }),
    ]);
    expect(body.failed_executions[0].detail).toContain("com.example.other.test");
    expect(body.failed_executions[0].detail).toContain("com.example.basic.test");
    expect(body.failed_executions[1].detail).toContain("com.example.CustomRunner");
    expect(body.failed_executions[1].detail).toContain("androidx.test.runner.AndroidJUnitRunner");
  });
});
