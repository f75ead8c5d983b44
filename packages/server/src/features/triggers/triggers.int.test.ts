import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/binaries/", import.meta.url));

let server: TestServer;
let acme: Record<string, string>;
let globex: Record<string, string>;
let acmeClientId: string;

const inspect = { type: "inspect", expect: { debuggable: false } };

async function createPlan(body: Record<string, unknown> = {}, headers = acme): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers,
    json: { name: "plan", package_name: "com.example.basic", steps: [inspect], ...body },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function upload(pkg: string, version: string, file: string, headers = acme) {
  const response = await fetch(`${server.baseUrl}/apps/${pkg}/versions/${version}`, {
    method: "PUT",
    headers,
    body: await readFile(path.join(fixtures, file)),
  });
  expect(response.status).toBe(201);
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  const acmeClient = await server.createClient("acme", "ci");
  acmeClientId = acmeClient.client_id;
  acme = { "x-api-key": await server.token(acmeClient) };
  globex = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
  for (const [headers, package_name] of [
    [acme, "com.example.basic"],
    [acme, "com.example.other"],
    [globex, "com.example.basic"],
  ] as const) {
    await call(`${server.baseUrl}/apps`, { headers, json: { package_name, platform: "android" } });
  }
  await upload("com.example.basic", "1.2.3", "app-basic.apk");
  await upload("com.example.other", "1.0", "app-other-package.apk");
  await upload("com.example.basic", "1.2.3", "app-basic.apk", globex);
});
afterAll(() => server.close());

const run = (json: unknown, headers: Record<string, string> = acme) =>
  call(`${server.baseUrl}/testplan/run`, { headers, json });
const batch = (json: unknown, headers: Record<string, string> = acme) =>
  call(`${server.baseUrl}/testplan/run/batch`, { headers, json });
const target = { package_name: "com.example.basic", version: "1.2.3" };

describe("POST /v1/testplan/run", () => {
  it("answers 200 with a queued execution and one device run per device entry", async () => {
    const onHost = await createPlan();
    const { status, body } = await run({ test_plan_id: onHost, ...target });
    expect(status).toBe(200);
    expect(body.execution).toMatchObject({
      test_plan_id: onHost,
      package_name: "com.example.basic",
      version: "1.2.3",
      status: "queued",
      cancel_requested: false,
      started_at: null,
      finished_at: null,
      summary: { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 },
      devices: [{ device: null, status: "queued", attempt: 1 }],
    });
    expect(body.execution.id).toMatch(/^ex_/);
    expect(body.execution.triggered_by).toEqual({ type: "client", id: acmeClientId, name: null });

    const devices = [{ platform: "android", model: "Pixel 8" }, { platform: "android" }];
    const twoDevices = await createPlan({ devices });
    const two = await run({ test_plan_id: twoDevices, ...target });
    expect(two.body.execution.devices.map((d: { device: unknown }) => d.device)).toEqual(devices);
  });

  it("says archived, then runs once the plan is restored; the same for deleted", async () => {
    const plan = await createPlan();
    await call(`${server.baseUrl}/testplans/${plan}/archive`, { method: "POST", headers: acme });
    const archived = await run({ test_plan_id: plan, ...target });
    expect(archived.status).toBe(404);
    expect(archived.body).toMatchObject({ code: "test_plan_not_found", reason: "archived" });
    expect(archived.body.fix).toContain(`POST /v1/testplans/${plan}/restore`);
    await call(`${server.baseUrl}/testplans/${plan}/restore`, { method: "POST", headers: acme });
    expect((await run({ test_plan_id: plan, ...target })).status).toBe(200);

    await call(`${server.baseUrl}/testplans/${plan}`, { method: "DELETE", headers: acme });
    const deleted = await run({ test_plan_id: plan, ...target });
    expect(deleted.status).toBe(404);
    expect(deleted.body.reason).toBe("deleted");
    await call(`${server.baseUrl}/testplans/${plan}/restore`, { method: "POST", headers: acme });
    expect((await run({ test_plan_id: plan, ...target })).status).toBe(200);
  });

  it("answers an unregistered version or app with a 404 that says what to do, not that the service is down", async () => {
    const plan = await createPlan();
    const version = await run({ test_plan_id: plan, package_name: "com.example.basic", version: "9.9.9" });
    expect(version.status).toBe(404);
    expect(version.body.code).toBe("app_version_not_found");
    expect(version.body.fix).toContain("testbay upload --app com.example.basic --version 9.9.9 --file PATH");
    expect(version.body.fix).toContain("PUT /v1/apps/com.example.basic/versions/9.9.9");
    const app = await run({ test_plan_id: plan, package_name: "com.example.nothere", version: "1.0" });
    expect(app.status).toBe(404);
    expect(app.body.code).toBe("app_not_found");
    expect(app.body.fix).toContain("testbay apps create --app com.example.nothere");
  });

  it("refuses a plan made for another app with 400", async () => {
    const plan = await createPlan({ package_name: "com.example.other" });
    const { status, body } = await run({ test_plan_id: plan, ...target });
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: "invalid_request", reason: "plan_for_other_app" });
  });

  it("treats another organization's plan as unknown", async () => {
    const theirs = await createPlan({}, globex);
    const { status, body } = await run({ test_plan_id: theirs, ...target });
    expect(status).toBe(404);
    expect(body).toMatchObject({ code: "test_plan_not_found", reason: "unknown" });
    expect(body.fix).toMatch(/do not work across organizations/);
    expect(body.fix).toContain("testbay plans list --app com.example.basic");
    expect(body.fix).toContain("GET /v1/testplans?package_name=com.example.basic");
  });
});

describe("POST /v1/testplan/run/batch", () => {
  it("answers 200 with every execution and an empty failed_executions when all plans start", async () => {
    const ids = [await createPlan(), await createPlan(), await createPlan()];
    const { status, body } = await batch({ ...target, test_plan_ids: ids });
    expect(status).toBe(200);
    expect(body.failed_executions).toEqual([]);
    expect(body.executions.map((e: { test_plan_id: string }) => e.test_plan_id)).toEqual(ids);
  });

  it("answers 207 naming each plan that did not start, with its code, reason, detail and fix", async () => {
    const ok = [await createPlan(), await createPlan()];
    const archived = await createPlan();
    await call(`${server.baseUrl}/testplans/${archived}/archive`, { method: "POST", headers: acme });
    const theirs = await createPlan({}, globex);
    const other = await createPlan({ package_name: "com.example.other" });
    const { status, body } = await batch({
      ...target,
      test_plan_ids: [ok[0], archived, theirs, ok[1], other],
    });
    expect(status).toBe(207);
    expect(body.executions.map((e: { test_plan_id: string }) => e.test_plan_id)).toEqual(ok);
    expect(body.failed_executions).toEqual([
      {
        test_plan_id: archived,
        status: 404,
        code: "test_plan_not_found",
        reason: "archived",
        detail: `Test plan ${archived} is archived.`,
        fix: `Restore it with POST /v1/testplans/${archived}/restore, or create a new plan.`,
      },
      expect.objectContaining({
        test_plan_id: theirs,
        status: 404,
        code: "test_plan_not_found",
        reason: "unknown",
      }),
      expect.objectContaining({
        test_plan_id: other,
        status: 400,
        code: "invalid_request",
        reason: "plan_for_other_app",
      }),
    ]);
  });

  it("answers the failures' common status when none starts, still listing failed_executions", async () => {
    const ids = ["tp_01AAAAAAAAAAAAAAAAAAAAAAAA", "tp_01BBBBBBBBBBBBBBBBBBBBBBBB"];
    const { status, headers, body } = await batch({ ...target, test_plan_ids: ids });
    expect(status).toBe(404);
    expect(headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(body).toMatchObject({ code: "test_plan_not_found", reason: "unknown", executions: [] });
    expect(body.failed_executions.map((f: { test_plan_id: string }) => f.test_plan_id)).toEqual(ids);

    const other = await createPlan({ package_name: "com.example.other" });
    const mixed = await batch({ ...target, test_plan_ids: [ids[0], other] });
    expect(mixed.status).toBe(400);
    expect(mixed.body.code).toBe("invalid_request");
    expect(mixed.body.failed_executions).toHaveLength(2);
  });

  it("fails the whole request for an unknown version, duplicate ids, no ids or more than 100", async () => {
    const plan = await createPlan();
    const version = await batch({
      package_name: "com.example.basic",
      version: "0.0.1",
      test_plan_ids: [plan],
    });
    expect(version.status).toBe(404);
    expect(version.body.code).toBe("app_version_not_found");

    for (const ids of [[plan, plan], [], Array.from({ length: 101 }, (_, i) => `tp_${i}`)]) {
      const response = await batch({ ...target, test_plan_ids: ids });
      expect(response.status, `${ids.length} ids`).toBe(400);
      expect(response.body.code).toBe("invalid_request");
      expect(response.body.errors[0].path).toMatch(/^\/test_plan_ids/);
    }
  });

  it("triggers 100 plans in one call", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await createPlan({ name: `bulk-${i}` }));
    const { status, body } = await batch({ ...target, test_plan_ids: ids });
    expect(status).toBe(200);
    expect(body.executions).toHaveLength(100);
  });
});

describe("Idempotency-Key", () => {
  async function executionsOf(plan: string): Promise<number> {
    const { body } = await call(`${server.baseUrl}/executions?test_plan_id=${plan}&limit=200`, {
      headers: acme,
    });
    return body.items.length;
  }

  async function raw(url: string, key: string, json: unknown) {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...acme, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(json),
    });
    return {
      status: response.status,
      replayed: response.headers.get("idempotent-replayed"),
      text: await response.text(),
    };
  }

  it("replays the first response byte for byte and triggers nothing more", async () => {
    const plan = await createPlan();
    const body = { ...target, test_plan_ids: [plan] };
    const first = await raw(`${server.baseUrl}/testplan/run/batch`, "key-replay-1", body);
    const again = await raw(`${server.baseUrl}/testplan/run/batch`, "key-replay-1", {
      test_plan_ids: [plan],
      ...target,
    });
    expect(first.status).toBe(200);
    expect(again).toEqual({ ...first, replayed: "true" });
    expect(await executionsOf(plan)).toBe(1);
  });

  it("replays a 207 and an error just the same", async () => {
    const plan = await createPlan();
    const partial = { ...target, test_plan_ids: [plan, "tp_01CCCCCCCCCCCCCCCCCCCCCCCC"] };
    const first = await raw(`${server.baseUrl}/testplan/run/batch`, "key-207", partial);
    const again = await raw(`${server.baseUrl}/testplan/run/batch`, "key-207", partial);
    expect(first.status).toBe(207);
    expect(again.text).toBe(first.text);

    const missing = { test_plan_id: plan, package_name: "com.example.basic", version: "7.7.7" };
    const failed = await raw(`${server.baseUrl}/testplan/run`, "key-404", missing);
    const failedAgain = await raw(`${server.baseUrl}/testplan/run`, "key-404", missing);
    expect(failed.status).toBe(404);
    expect(failedAgain.text).toBe(failed.text);
  });

  it("answers 422 when a key comes back with another body", async () => {
    const plan = await createPlan();
    await raw(`${server.baseUrl}/testplan/run`, "key-mismatch", { test_plan_id: plan, ...target });
    const other = await raw(`${server.baseUrl}/testplan/run`, "key-mismatch", {
      test_plan_id: plan,
      ...target,
      env: { FLAVOR: "other" },
    });
    expect(other.status).toBe(422);
    expect(JSON.parse(other.text).code).toBe("idempotency_key_reused");
    expect(await executionsOf(plan)).toBe(1);
  });

  it("triggers once when requests with one key arrive together", async () => {
    const plan = await createPlan();
    const body = { test_plan_id: plan, ...target };
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => raw(`${server.baseUrl}/testplan/run`, "key-concurrent", body)),
    );
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(await executionsOf(plan)).toBe(1);
  });

  it("keeps keys per client and forgets them after 24 hours", async () => {
    const plan = await createPlan();
    const body = { test_plan_id: plan, ...target };
    await raw(`${server.baseUrl}/testplan/run`, "key-expiring", body);
    server.clock.advance(24 * 3600 * 1000 + 1000);
    // The clock passed the tokens' 24 hours too.
    acme = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
    globex = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
    const later = await raw(`${server.baseUrl}/testplan/run`, "key-expiring", body);
    expect(later.replayed).toBeNull();
    expect(await executionsOf(plan)).toBe(2);
  });

  it("refuses a malformed key", async () => {
    const response = await fetch(`${server.baseUrl}/testplan/run`, {
      method: "POST",
      headers: { ...acme, "content-type": "application/json", "idempotency-key": "x".repeat(300) },
      body: JSON.stringify({ test_plan_id: "tp_x", ...target }),
    });
    expect(response.status).toBe(400);
  });
});

describe("executions", () => {
  it("gets, filters and cancels executions; a cancelled queued run ends at once", async () => {
    const plan = await createPlan({ devices: [{ platform: "android" }, { platform: "android" }] });
    const { body } = await run({ test_plan_id: plan, ...target });
    const id = body.execution.id;

    const got = await call(`${server.baseUrl}/executions/${id}`, { headers: acme });
    expect(got.body).toEqual(body.execution);
    const queued = await call(`${server.baseUrl}/executions?test_plan_id=${plan}&status=queued`, {
      headers: acme,
    });
    expect(queued.body.items.map((e: { id: string }) => e.id)).toEqual([id]);

    const cancelled = await call(`${server.baseUrl}/executions/${id}/cancel`, {
      method: "POST",
      headers: acme,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "cancelled", cancel_requested: true });
    expect(cancelled.body.finished_at).not.toBeNull();
    expect(cancelled.body.devices.map((d: { status: string }) => d.status)).toEqual([
      "cancelled",
      "cancelled",
    ]);
    const again = await call(`${server.baseUrl}/executions/${id}/cancel`, { method: "POST", headers: acme });
    expect(again.body).toEqual(cancelled.body);

    const byVersion = await call(
      `${server.baseUrl}/executions?package_name=com.example.basic&version=1.2.3&status=cancelled`,
      { headers: acme },
    );
    expect(byVersion.body.items.map((e: { id: string }) => e.id)).toContain(id);
  });

  it("shows another organization's execution as unknown", async () => {
    const plan = await createPlan();
    const { body } = await run({ test_plan_id: plan, ...target });
    const theirs = await call(`${server.baseUrl}/executions/${body.execution.id}`, { headers: globex });
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe("execution_not_found");
    const cancel = await call(`${server.baseUrl}/executions/${body.execution.id}/cancel`, {
      method: "POST",
      headers: globex,
    });
    expect(cancel.status).toBe(404);
    const list = await call(`${server.baseUrl}/executions?test_plan_id=${plan}`, { headers: globex });
    expect(list.body.items).toEqual([]);
  });

  it("pages newest first without skipping or repeating while executions are added", async () => {
    const plan = await createPlan();
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      server.clock.advance(10);
      made.push((await run({ test_plan_id: plan, ...target })).body.execution.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?test_plan_id=${plan}&limit=3${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await call(`${server.baseUrl}/executions${query}`, { headers: acme });
      seen.push(...page.body.items.map((e: { id: string }) => e.id));
      cursor = page.body.next_cursor;
      server.clock.advance(10);
      await run({ test_plan_id: plan, ...target });
    } while (cursor && ++pages < 10);
    expect(seen).toEqual([...made].reverse());
  });
});
