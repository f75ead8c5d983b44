// Every typed SDK method against a real server: the client's models are written from the contract, and
// this is where they meet the server's actual answers.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { Testbay } from "./client.ts";
import { TestbayApiError } from "./errors.ts";
import type { ResponseEvent } from "./transport.ts";

const fixture = fileURLToPath(
  new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url),
);
const app = "com.example.basic";

let server: TestServer;
let dir: string;
let testbay: Testbay;
const responses: ResponseEvent[] = [];

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-sdk-int-"));
  const ci = await server.createClient("acme", "ci");
  testbay = new Testbay({
    baseUrl: server.baseUrl,
    clientId: ci.client_id,
    clientSecret: ci.client_secret,
    audience: server.config.audience,
    clock: { now: () => server.clock.now(), sleep: async (ms) => server.clock.advance(ms) },
    onResponse: (event) => responses.push(event),
  });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the SDK against a real server", () => {
  it("speaks every endpoint of API.md §1–6 with one token", async () => {
    const me = await testbay.me();
    expect(me).toMatchObject({ role: "ci", organization: { name: "acme" } });

    const created = await testbay.apps.create({
      package_name: app,
      platform: "android",
      display_name: "Basic",
    });
    expect(created).toMatchObject({ package_name: app, platform: "android", display_name: "Basic" });
    expect(await testbay.apps.get(app)).toEqual(created);
    expect((await testbay.apps.list()).items.map((a) => a.package_name)).toEqual([app]);
    const exists = await testbay.apps.create({ package_name: app, platform: "android" }).catch((e) => e);
    expect(exists).toBeInstanceOf(TestbayApiError);
    expect(exists).toMatchObject({ status: 409, code: "app_exists" });
    const caseMismatch = await testbay.apps.get("com.example.BASIC").catch((e) => e);
    expect(caseMismatch).toMatchObject({ status: 404, code: "app_not_found", reason: "case_mismatch" });

    expect(await testbay.versions.exists(app, "1.0")).toBe(false);
    const progress: number[] = [];
    const uploaded = await testbay.versions.upload({
      packageName: app,
      version: "1.0",
      file: fixture,
      onProgress: (p) => progress.push(p.sentBytes),
    });
    const bytes = await readFile(fixture);
    const sha = createHash("sha256").update(bytes).digest("hex");
    expect(uploaded).toMatchObject({
      outcome: "uploaded",
      sizeBytes: bytes.length,
      version: { sha256: sha },
    });
    expect(progress.at(-1)).toBe(bytes.length);
    expect(await testbay.versions.exists(app, "1.0")).toBe(true);
    expect(await testbay.versions.get(app, "1.0")).toMatchObject({
      size_bytes: bytes.length,
      binary: { format: "apk" },
    });
    expect((await testbay.versions.list(app)).items.map((v) => v.version)).toEqual(["1.0"]);
    // Without the HEAD, the PUT meets 409 for the very same bytes: rule 9 calls that success.
    const again = await testbay.versions.upload({
      packageName: app,
      version: "1.0",
      file: fixture,
      skipIfRegistered: false,
    });
    expect(again.outcome).toBe("already_landed");

    const whole = path.join(dir, "whole.apk");
    expect(await testbay.versions.downloadBinary(app, "1.0", whole)).toEqual({
      status: 200,
      sha256: sha,
      bytes: bytes.length,
    });
    expect(
      createHash("sha256")
        .update(await readFile(whole))
        .digest("hex"),
    ).toBe(sha);
    const part = path.join(dir, "part.bin");
    expect(await testbay.versions.downloadBinary(app, "1.0", part, { start: 0, end: 99 })).toMatchObject({
      status: 206,
      bytes: 100,
    });
    expect((await stat(part)).size).toBe(100);

    const steps = [{ type: "inspect" as const, expect: { debuggable: false } }];
    const plan = await testbay.testPlans.create({ name: "smoke", package_name: app, steps });
    expect(plan).toMatchObject({
      name: "smoke",
      state: "active",
      devices: [],
      timeout_seconds: 1800,
      max_attempts: 1,
    });
    expect(await testbay.testPlans.patch(plan.id, { name: "smoke 2", max_attempts: 2 })).toMatchObject({
      name: "smoke 2",
      max_attempts: 2,
    });
    expect(await testbay.testPlans.get(plan.id)).toMatchObject({ name: "smoke 2" });
    expect((await testbay.testPlans.archive(plan.id)).state).toBe("archived");
    const archived = await testbay.triggers
      .run({ test_plan_id: plan.id, package_name: app, version: "1.0" })
      .catch((e) => e);
    expect(archived).toMatchObject({ status: 404, code: "test_plan_not_found", reason: "archived" });
    expect(archived.fix).toContain(`/v1/testplans/${plan.id}/restore`);
    expect((await testbay.testPlans.restore(plan.id)).state).toBe("active");
    const deleted = await testbay.testPlans.delete(plan.id);
    expect(deleted.state).toBe("deleted");
    expect(deleted.restorable_until).toBeDefined();
    expect((await testbay.testPlans.list({ state: "deleted" })).items.map((p) => p.id)).toEqual([plan.id]);
    await testbay.testPlans.restore(plan.id);

    const single = await testbay.triggers.run({ test_plan_id: plan.id, package_name: app, version: "1.0" });
    expect(single.execution).toMatchObject({
      test_plan_id: plan.id,
      status: "queued",
      summary: { tests: 0 },
    });
    expect(single.replayed).toBe(false);
    const replay = await testbay.triggers.run(
      { test_plan_id: plan.id, package_name: app, version: "1.0" },
      { idempotencyKey: single.idempotency_key },
    );
    expect(replay).toMatchObject({ replayed: true, execution: { id: single.execution.id } });

    const batch = await testbay.triggers.runBatch({
      package_name: app,
      version: "1.0",
      test_plan_ids: [plan.id],
    });
    expect(batch).toMatchObject({ status: 200, failed_executions: [], replayed: false });
    const [execution] = batch.executions;
    expect(await testbay.executions.get(execution?.id ?? "")).toMatchObject({ status: "queued" });
    const listed = await testbay.executions.list({ test_plan_id: plan.id });
    expect(listed.items.map((e) => e.id)).toEqual([execution?.id, single.execution.id]);
    expect(await testbay.executions.cancel(execution?.id ?? "")).toMatchObject({ status: "cancelled" });
    const all = [];
    for await (const e of testbay.executions.all({ package_name: app, limit: 1 })) all.push(e.status);
    expect(all).toEqual(["cancelled", "queued"]);

    expect(responses.filter((r) => r.path === "/oauth/token")).toHaveLength(1);
    expect(responses.filter((r) => r.status === 429)).toEqual([]);
  });
});
