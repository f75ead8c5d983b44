// DELETE /v1/apps/{pkg}/versions/{v} and retention (TESTBAY_KEEP_VERSIONS), observed over HTTP and in the
// blob store: what is deleted is gone from both, what runs still need is refused, past runs keep their records.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  registerBasicApp,
  startTestServer,
  type TestServer,
  uploadBasicTestPackage,
} from "../../../test/harness.ts";

const pkg = "com.example.basic";
const inspect = { type: "inspect", expect: { debuggable: false } };

let server: TestServer;
let ci: Record<string, string>;
let admin: Record<string, string>;
let agent: Record<string, string>;
let otherAdmin: Record<string, string>;
let planId: string;

const versionUrl = (version: string) => `${server.baseUrl}/apps/${pkg}/versions/${version}`;
const remove = (version: string, headers = admin) => call(versionUrl(version), { method: "DELETE", headers });
const trigger = async (version: string) => {
  const response = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: pkg, version },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.execution.id as string;
};

/** Every key in the blob store. */
async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of server.app.services.blobs.keys()) keys.push(key);
  return keys.sort();
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  admin = { "x-api-key": await server.token(await server.createClient("acme", "admin")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  otherAdmin = { "x-api-key": await server.token(await server.createClient("globex", "admin")) };
  await registerBasicApp(server, ci, "1.0");
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: { name: "inspect", package_name: pkg, steps: [inspect] },
  });
  expect(plan.status, JSON.stringify(plan.body)).toBe(201);
  planId = plan.body.id;
});
afterAll(() => server.close());

describe("DELETE /v1/apps/{package_name}/versions/{version}", () => {
  it("removes the version, its binary and its test package; the same version can be uploaded again", async () => {
    await registerBasicApp(server, ci, "2.0");
    await uploadBasicTestPackage(server, ci, "2.0");
    const before = await storedKeys();

    const response = await remove("2.0");
    expect(response.status, JSON.stringify(response.body)).toBe(204);
    expect(response.body).toBe("");

    expect((await call(versionUrl("2.0"), { headers: ci })).body).toMatchObject({
      status: 404,
      code: "app_version_not_found",
    });
    expect((await call(`${versionUrl("2.0")}/binary`, { headers: ci })).status).toBe(404);
    expect((await call(`${versionUrl("2.0")}/test-package`, { headers: ci })).status).toBe(404);
    const listed = await call(`${server.baseUrl}/apps/${pkg}/versions`, { headers: ci });
    expect(listed.body.items.map((item: { version: string }) => item.version)).not.toContain("2.0");
    const after = await storedKeys();
    expect(before.length - after.length).toBe(2);
    expect(after.every((key) => before.includes(key))).toBe(true);

    // A second delete finds nothing to delete.
    expect((await remove("2.0")).body).toMatchObject({ status: 404, code: "app_version_not_found" });
    await registerBasicApp(server, ci, "2.0");
    const again = await call(versionUrl("2.0"), { headers: ci });
    expect(again.body).toMatchObject({ version: "2.0", test_package: null });
  });

  it("is for admins only: a ci or agent client gets 403 and the version stays", async () => {
    await registerBasicApp(server, ci, "3.0");
    for (const headers of [ci, agent]) {
      expect((await remove("3.0", headers)).body).toMatchObject({ status: 403, code: "forbidden" });
    }
    expect((await call(versionUrl("3.0"), { headers: ci })).status).toBe(200);
  });

  it("answers 404 for another organization's version, as for an unknown one", async () => {
    expect((await remove("1.0", otherAdmin)).body).toMatchObject({ status: 404, code: "app_not_found" });
    expect((await remove("9.9")).body).toMatchObject({ status: 404, code: "app_version_not_found" });
    expect((await call(versionUrl("1.0"), { headers: ci })).status).toBe(200);
  });

  it("refuses with 409 while an execution of the version is queued or running; past runs keep their records", async () => {
    await registerBasicApp(server, ci, "4.0");
    const executionId = await trigger("4.0");

    const queued = await remove("4.0");
    expect(queued.status).toBe(409);
    expect(queued.body).toMatchObject({
      code: "app_version_in_use",
      execution_ids: [executionId],
      fix: expect.stringContaining(`POST /v1/executions/${executionId}/cancel`),
    });

    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "agent-1", devices: [] },
    });
    expect(claimed.body.job.execution_id).toBe(executionId);
    expect((await call(`${server.baseUrl}/executions/${executionId}`, { headers: ci })).body.status).toBe(
      "running",
    );
    expect((await remove("4.0")).body).toMatchObject({ status: 409, code: "app_version_in_use" });
    expect((await call(versionUrl("4.0"), { headers: ci })).status).toBe(200);

    const done = await call(`${server.baseUrl}/agent/jobs/${claimed.body.job.lease_id}/complete`, {
      headers: agent,
      json: { status: "passed" },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect((await remove("4.0")).status).toBe(204);

    const past = await call(`${server.baseUrl}/executions/${executionId}`, { headers: ci });
    expect(past.body).toMatchObject({ id: executionId, package_name: pkg, version: "4.0", status: "passed" });
    // Triggering the deleted version is refused like any unknown version.
    const retrigger = await call(`${server.baseUrl}/testplan/run`, {
      headers: ci,
      json: { test_plan_id: planId, package_name: pkg, version: "4.0" },
    });
    expect(retrigger.body).toMatchObject({ status: 404, code: "app_version_not_found" });
  });
});

describe("retention (TESTBAY_KEEP_VERSIONS)", () => {
  it("deletes each app's versions beyond the newest N, except those with queued runs", async () => {
    // A store of its own, so the versions of the tests above do not count.
    const own = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
    try {
      const headers = { "x-api-key": await own.token(await own.createClient("acme", "ci")) };
      for (const version of ["1", "2", "3", "4", "5"]) {
        await registerBasicApp(own, headers, version);
        own.clock.advance(1000);
      }
      await uploadBasicTestPackage(own, headers, "1");
      const plan = await call(`${own.baseUrl}/testplans`, {
        headers,
        json: { name: "inspect", package_name: pkg, steps: [inspect] },
      });
      const queued = await call(`${own.baseUrl}/testplan/run`, {
        headers,
        json: { test_plan_id: plan.body.id, package_name: pkg, version: "2" },
      });
      expect(queued.status).toBe(200);
      // Only this organization's objects: on the scaled set the blob store (S3) is shared with other tests.
      const org = await own.app.services.database.db
        .selectFrom("organizations")
        .select("id")
        .where("name", "=", "acme")
        .executeTakeFirstOrThrow();
      const ownKeys = async () => {
        const keys: string[] = [];
        for await (const key of own.app.services.blobs.keys())
          if (key.includes(`/${org.id}/`)) keys.push(key);
        return keys;
      };
      const keysBefore = await ownKeys();

      // A second instance on the same store with retention on: it runs the job as it starts.
      const retaining = await startTestServer({
        shareWith: own,
        clock: own.clock,
        // Its blob store too: on the scaled set that is an S3 endpoint, which shareWith alone does not pass on.
        env: { TESTBAY_KEEP_VERSIONS: "2", TESTBAY_STORAGE_URL: own.config.storageUrl },
      });
      try {
        const listed = await call(`${own.baseUrl}/apps/${pkg}/versions`, { headers });
        expect(listed.body.items.map((item: { version: string }) => item.version)).toEqual(["5", "4", "2"]);
        const keysAfter = await ownKeys();
        // Versions 1 (with its test package) and 3: three objects gone.
        expect(keysBefore.length - keysAfter.length).toBe(3);
        expect(retaining.logs.join("")).toContain("retention deleted an old version and its binary");
        const execution = await call(`${own.baseUrl}/executions/${queued.body.execution.id}`, { headers });
        expect(execution.body).toMatchObject({ version: "2", status: "queued" });
      } finally {
        await retaining.close();
      }
    } finally {
      await own.close();
    }
  });
});

describe("TESTBAY_KEEP_VERSIONS", () => {
  it("is refused unless a whole number ≥ 1", async () => {
    await expect(startTestServer({ env: { TESTBAY_KEEP_VERSIONS: "0" } })).rejects.toThrow(
      /TESTBAY_KEEP_VERSIONS must be a whole number of versions ≥ 1 to keep per app; got "0"/,
    );
  });
});
