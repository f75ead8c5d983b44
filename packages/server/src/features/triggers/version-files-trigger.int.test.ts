// A plan whose instrumentation step names version files (additional_apks, push[].file; API.md §14) triggers only
// on a version that has them: 404 version_file_not_found with the upload that fixes it, alone or in a batch.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../../test/harness.ts";

const pkg = "com.example.basic";
let server: TestServer;
let ci: Record<string, string>;

async function plan(step: Record<string, unknown>): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: `files ${JSON.stringify(step)}`,
      package_name: pkg,
      devices: [{ platform: "android" }],
      steps: [{ type: "instrumentation", ...step }],
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.id;
}

const single = (version: string, id: string) =>
  call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { package_name: pkg, version, test_plan_id: id },
  });
const batch = (version: string, ids: string[]) =>
  call(`${server.baseUrl}/testplan/run/batch`, {
    headers: ci,
    json: { package_name: pkg, version, test_plan_ids: ids },
  });

async function uploadFile(version: string, name: string, body: string): Promise<void> {
  const response = await fetch(`${server.baseUrl}/apps/${pkg}/versions/${version}/files/${name}`, {
    method: "PUT",
    headers: ci,
    body,
  });
  expect(response.status).toBe(201);
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  for (const version of ["1.0", "2.0"]) {
    await registerBasicApp(server, ci, version);
    await uploadBasicTestPackage(server, ci, version);
  }
  await uploadFile("2.0", "orchestrator.apk", "apk bytes");
  await uploadFile("2.0", "users.json", "{}");
});
afterAll(() => server.close());

describe("triggering a plan that names version files", () => {
  it("answers 404 version_file_not_found for a push file the version lacks, naming the step and the upload", async () => {
    const id = await plan({ push: [{ file: "users.json", to: "/sdcard/users.json" }] });
    const { status, body } = await single("1.0", id);
    expect(status).toBe(404);
    expect(body).toMatchObject({ code: "version_file_not_found" });
    expect(body.detail).toContain("names the version file users.json");
    expect(body.detail).toContain("Step 1");
    expect(body.detail).toContain("has no files");
    expect(body.fix).toContain(
      "testbay upload --app com.example.basic --version 1.0 --file BUILD --extra-file users.json=PATH",
    );
  });

  it("answers 404 for an additional APK the version lacks, saying which files it has", async () => {
    const id = await plan({ additional_apks: ["orchestrator.apk", "services.apk"] });
    const { status, body } = await single("2.0", id);
    expect(status).toBe(404);
    expect(body).toMatchObject({ code: "version_file_not_found" });
    expect(body.detail).toContain("names the version file services.apk");
    expect(body.detail).toContain("orchestrator.apk, users.json");
    expect(body.fix).toContain("--extra-file services.apk=PATH");
  });

  it("triggers when the version has every file named", async () => {
    const id = await plan({
      additional_apks: ["orchestrator.apk"],
      push: [{ file: "users.json", to: "/data/local/tmp/users.json" }],
    });
    const { status, body } = await single("2.0", id);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.execution).toMatchObject({ status: "queued", version: "2.0" });
  });

  it("in a batch, lists the plan in failed_executions and triggers the others (207)", async () => {
    const lacking = await plan({ push: [{ file: "users.json", to: "/sdcard/u.json" }] });
    const plain = await plan({});
    const { status, body } = await batch("1.0", [lacking, plain]);
    expect(status).toBe(207);
    expect(body.executions).toHaveLength(1);
    expect(body.failed_executions).toEqual([
      expect.objectContaining({ test_plan_id: lacking, status: 404, code: "version_file_not_found" }),
    ]);
    expect(body.failed_executions[0].fix).toContain("--extra-file users.json=PATH");
  });
});
