import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import {
  fakeCounterProducts,
  makeXctestZip,
  xctestrunFixture,
} from "../versions/inspection/make-xctest-zip.ts";

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;

const app = "com.example.iosapp";
const simulator = {
  serial: "5A0C8E8E-4F5B-4B0A-9D9A-000000000001",
  platform: "ios",
  model: "iPhone 15",
  os_version: "17.5",
};
const ipa = fileURLToPath(new URL("../../../test/fixtures/binaries/ios-xml-plist.ipa", import.meta.url));

async function put(path: string, body: Buffer) {
  const response = await fetch(`${server.baseUrl}/apps/${app}/versions/${path}`, {
    method: "PUT",
    headers: { ...ci, "content-type": "application/octet-stream" },
    body,
  });
  expect(response.status, await response.clone().text()).toBe(201);
}

async function plan(step: Record<string, unknown>): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `xcuitest ${JSON.stringify(step)}`,
      package_name: app,
      devices: [{ platform: "ios" }],
      steps: [{ type: "xcuitest", ...step }],
    },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

const batch = (version: string, ids: string[]) =>
  call(`${server.baseUrl}/testplan/run/batch`, {
    headers: ci,
    json: { package_name: app, version, test_plan_ids: ids },
  });

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  expect(
    (await call(`${server.baseUrl}/apps`, { headers: ci, json: { package_name: app, platform: "ios" } }))
      .status,
  ).toBe(201);
  for (const version of ["1.0", "2.0"]) await put(version, await readFile(ipa));
  const products = makeXctestZip(xctestrunFixture("v2-unit-and-ui.xctestrun"), fakeCounterProducts(app));
  await put("2.0/test-package", products);
});
afterAll(() => server.close());

describe("triggering an xcuitest plan", () => {
  it("needs the version's test package, and says to upload build-for-testing output", async () => {
    const id = await plan({});
    const { status, body } = await batch("1.0", [id]);
    expect(status).toBe(404);
    expect(body.failed_executions).toEqual([
      expect.objectContaining({ test_plan_id: id, status: 404, code: "test_package_not_found" }),
    ]);
    expect(body.failed_executions[0].detail).toContain("has an xcuitest step");
    expect(body.failed_executions[0].fix).toContain("xcodebuild build-for-testing");
    expect(body.failed_executions[0].fix).toContain(`PUT /v1/apps/${app}/versions/1.0/test-package`);
  });

  it("refuses identifiers whose target the test package does not have, naming the ones it has", async () => {
    const id = await plan({ skip_testing: ["FakeCounterAppUITests/Slow", "ShopUITests/CheckoutTests"] });
    const { status, body } = await batch("2.0", [id]);
    expect(status).toBe(400);
    expect(body.failed_executions[0]).toMatchObject({
      code: "test_package_mismatch",
      reason: "unknown_test_target",
    });
    expect(body.failed_executions[0].detail).toContain("skip_testing ShopUITests/CheckoutTests");
    expect(body.failed_executions[0].fix).toContain("FakeCounterAppTests, FakeCounterAppUITests");
  });

  it("queues the run for an agent that offers xcuitest, and hands it the XCUITest bundle", async () => {
    const id = await plan({ only_testing: ["FakeCounterAppUITests/CounterUITests"], retry_failed_tests: 1 });
    const { status, body } = await batch("2.0", [id]);
    expect(status).toBe(200);
    const android = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: {
        agent_id: "linux",
        devices: [{ serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" }],
        step_types: ["instrumentation"],
      },
    });
    expect(android.status).toBe(204);
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "mac", devices: [simulator], step_types: ["xcuitest"] },
    });
    expect(claimed.status).toBe(200);
    const job = claimed.body.job;
    expect(job.execution_id).toBe(body.executions[0].id);
    expect(job.plan.steps[0]).toEqual({
      type: "xcuitest",
      only_testing: ["FakeCounterAppUITests/CounterUITests"],
      retry_failed_tests: 1,
    });
    expect(job.test_package).toMatchObject({
      url: `/v1/apps/${app}/versions/2.0/test-package/binary`,
      format: "xctest",
      test: {
        xctestrun: "FakeCounterAppTest_FakeAppTestPlan_iphoneos18.2-arm64.xctestrun",
        test_targets: [
          { name: "FakeCounterAppTests", bundle_id: "saucelabs.FakeCounterApp", ui_target_app: null },
          { name: "FakeCounterAppUITests", ui_target_app: app },
        ],
      },
    });
    await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/complete`, {
      headers: agent,
      json: { status: "cancelled" },
    });
  });
});
