// What a job carries for Flank-style plans (API.md §14), as an agent claims it: the version's files with URLs
// only its lease opens, the device entry's locale and orientation, the step's device-file options as the plan
// has them; and the artifacts the agent names pulled/<shard>/… and coverage/<shard>/….
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../../test/harness.ts";

const pkg = "com.example.basic";
const pixel = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
const apkBytes = Buffer.from("PK\u0003\u0004 stand-in for test-services.apk");
const fixture = Buffer.from('{"user":"ada@example.com"}');
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

const step = {
  type: "instrumentation",
  environment: { clearPackageData: "true", listener: "com.example.Listener" },
  use_orchestrator: true,
  additional_apks: ["test-services.apk"],
  push: [{ file: "users.json", to: "/sdcard/Download/users.json" }],
  pull: [
    "/sdcard/googletest/test_outputfiles",
    "/sdcard/Android/data/com.example.basic/files/allure-results",
  ],
  pull_filter: [".*\\.json$"],
  coverage: true,
  always_run: ["com.example.SetupTest#login"],
  filter: { not_classes: ["com.example.SlowTest"], not_packages: ["com.example.flaky"] },
};

let server: TestServer;
let ci: Record<string, string>;
let agent: Record<string, string>;
let otherAgent: Record<string, string>;
let job: {
  lease_id: string;
  execution_id: string;
  version_files: Array<{ name: string; size_bytes: number; sha256: string; url: string }>;
  device_entry: Record<string, unknown> | null;
  plan: { steps: Array<Record<string, unknown>> };
};

/** The server's origin with a job URL (relative to it without TESTBAY_PUBLIC_URL, as binary_url is). */
const absolute = (url: string) => new URL(url, server.origin).toString();

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_AGENT_RATE_LIMIT_BURST: "100000" },
  });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  otherAgent = { "x-api-key": await server.token(await server.createClient("globex", "agent")) };
  await registerBasicApp(server, ci, "1.0");
  await uploadBasicTestPackage(server, ci, "1.0");
  for (const [name, body] of [
    ["test-services.apk", apkBytes],
    ["users.json", fixture],
  ] as const) {
    const response = await fetch(`${server.baseUrl}/apps/${pkg}/versions/1.0/files/${name}`, {
      method: "PUT",
      headers: ci,
      body,
    });
    expect(response.status).toBe(201);
  }
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "flank",
      package_name: pkg,
      devices: [{ platform: "android", locale: "fr_FR", orientation: "landscape" }],
      steps: [step],
    },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);
  const triggered = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: plan.body.id, package_name: pkg, version: "1.0" },
  });
  expect(triggered.status, JSON.stringify(triggered.body)).toBe(200);
  const claimed = await call(`${server.baseUrl}/agent/claim`, {
    headers: agent,
    json: { agent_id: "flank-agent", devices: [pixel], step_types: ["instrumentation"] },
  });
  expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
  job = claimed.body.job;
});
afterAll(() => server.close());

describe("a job of a plan with device files", () => {
  it("lists every file of the version with its size, sha256 and a URL under its lease", () => {
    expect(job.version_files).toEqual([
      {
        name: "test-services.apk",
        size_bytes: apkBytes.length,
        sha256: sha256(apkBytes),
        url: `/v1/agent/jobs/${job.lease_id}/files/test-services.apk`,
      },
      {
        name: "users.json",
        size_bytes: fixture.length,
        sha256: sha256(fixture),
        url: `/v1/agent/jobs/${job.lease_id}/files/users.json`,
      },
    ]);
  });

  it("carries the device entry's locale and orientation, and the step's options as the plan has them", () => {
    expect(job.device_entry).toEqual({ platform: "android", locale: "fr_FR", orientation: "landscape" });
    expect(job.plan.steps[0]).toMatchObject(step);
  });

  it("serves a file to the agent holding the lease, whole and by Range, with its ETag", async () => {
    const [users] = job.version_files.filter((file) => file.name === "users.json");
    const whole = await fetch(absolute(users?.url ?? ""), { headers: agent });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("etag")).toBe(`"${sha256(fixture)}"`);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(fixture);
    const part = await fetch(absolute(users?.url ?? ""), { headers: { ...agent, range: "bytes=0-6" } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe(fixture.subarray(0, 7).toString());
  });

  it("answers 404 version_file_not_found for a name the version lacks", async () => {
    const missing = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/files/nope.apk`, {
      headers: agent,
    });
    expect(missing.body).toMatchObject({ status: 404, code: "version_file_not_found" });
  });

  it("opens to no one else: another organization's agent (lease_lost) and a CI client (forbidden)", async () => {
    const url = `${server.baseUrl}/agent/jobs/${job.lease_id}/files/users.json`;
    expect((await call(url, { headers: otherAgent })).body).toMatchObject({
      status: 409,
      code: "lease_lost",
    });
    expect((await call(url, { headers: ci })).status).toBe(403);
  });

  it("takes artifacts named pulled/<shard>/<device path> and coverage/<shard>/<file>", async () => {
    const names = [
      "pulled/0/sdcard/Android/data/com.example.basic/files/allure-results/4f1e-result.json",
      "pulled/0/sdcard/googletest/test_outputfiles/screenshot_login-1.png",
      "coverage/0/testbay-0.ec",
      "coverage/0/com.example.LoginTest_signIn.ec",
    ];
    for (const name of names) {
      const response = await fetch(`${server.baseUrl}/agent/jobs/${job.lease_id}/artifacts/${name}`, {
        method: "PUT",
        headers: { ...agent, "content-type": "application/octet-stream" },
        body: `bytes of ${name}`,
      });
      expect(response.status, `${name}: ${await response.clone().text()}`).toBe(201);
    }
    const listed = await call(`${server.baseUrl}/executions/${job.execution_id}/artifacts`, { headers: ci });
    expect(listed.body.items.map((item: { name: string }) => item.name).sort()).toEqual([...names].sort());
    const climbing = await fetch(
      `${server.baseUrl}/agent/jobs/${job.lease_id}/artifacts/pulled/0/..%2Fsecret`,
      {
        method: "PUT",
        headers: { ...agent, "content-type": "application/octet-stream" },
        body: "x",
      },
    );
    expect(climbing.status).toBe(400);
  });

  it("closes the files once the lease ends", async () => {
    const done = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/complete`, {
      headers: agent,
      json: { status: "passed" },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const after = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/files/users.json`, {
      headers: agent,
    });
    expect(after.body).toMatchObject({ status: 409, code: "lease_lost" });
  });
});
