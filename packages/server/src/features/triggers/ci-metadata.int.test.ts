import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;
let acme: Record<string, string>;
let plan: string;
const target = { package_name: "com.example.basic", version: "1.2.3" };

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  acme = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  await registerBasicApp(server, acme);
  const created = await call(`${server.baseUrl}/testplans`, {
    headers: acme,
    json: {
      name: "ci",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  plan = created.body.id;
});
afterAll(() => server.close());

const run = (json: unknown, headers: Record<string, string> = acme) =>
  call(`${server.baseUrl}/testplan/run`, { headers, json });
const batch = (json: unknown, headers: Record<string, string> = acme) =>
  call(`${server.baseUrl}/testplan/run/batch`, { headers, json });
const list = async (query: string) => {
  const response = await call(`${server.baseUrl}/executions?${query}`, { headers: acme });
  expect(response.status).toBe(200);
  return response.body as { items: Array<{ id: string; ci: unknown }>; next_cursor: string | null };
};

const github = {
  provider: "github",
  branch: "feature/login",
  commit: "3f2a9c1e4b5d6a7f8091a2b3c4d5e6f708192a3b",
  pull_request: "42",
  build_url: "https://github.com/acme/app/actions/runs/123",
};

describe("ci metadata on triggers", () => {
  it("is kept on each execution of both trigger calls and shown as given", async () => {
    const one = await run({ test_plan_id: plan, ...target, ci: github });
    expect(one.status).toBe(200);
    expect(one.body.execution.ci).toEqual(github);

    const many = await batch({
      ...target,
      test_plan_ids: [plan],
      ci: { provider: "gitlab", branch: "main", commit: "aaaa1111" },
    });
    expect(many.status).toBe(200);
    expect(many.body.executions[0].ci).toEqual({ provider: "gitlab", branch: "main", commit: "aaaa1111" });

    const read = await call(`${server.baseUrl}/executions/${one.body.execution.id}`, { headers: acme });
    expect(read.body.ci).toEqual(github);
  });

  it("is null without ci, and empty strings count as not given (CI variables that are set but empty)", async () => {
    const none = await run({ test_plan_id: plan, ...target });
    expect(none.body.execution.ci).toBeNull();
    const empty = await run({
      test_plan_id: plan,
      ...target,
      ci: { provider: "github", branch: "", pull_request: "" },
    });
    expect(empty.status).toBe(200);
    expect(empty.body.execution.ci).toEqual({ provider: "github" });
    const allEmpty = await run({ test_plan_id: plan, ...target, ci: { branch: "" } });
    expect(allEmpty.body.execution.ci).toBeNull();
  });

  it("refuses unknown fields, overlong values and a build_url that is not http(s)", async () => {
    for (const ci of [
      { provider: "github", job: "x" },
      { branch: "b".repeat(256) },
      { commit: "c".repeat(65) },
      { build_url: "javascript:alert(1)" },
      { pull_request: 42 },
    ]) {
      const response = await run({ test_plan_id: plan, ...target, ci });
      expect(response.status, JSON.stringify(ci)).toBe(400);
      expect(response.body.code).toBe("invalid_request");
    }
  });

  it("filters GET /executions by branch, by commit and by both, page after page", async () => {
    const commit = "b7e1d2c3";
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      server.clock.advance(1000);
      const response = await run({
        test_plan_id: plan,
        ...target,
        ci: { branch: "release/2.0", commit: i < 3 ? commit : `other${i}` },
      });
      ids.push(response.body.execution.id);
    }
    await run({ test_plan_id: plan, ...target, ci: { branch: "main", commit } });

    const byBranch: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list(
        `branch=${encodeURIComponent("release/2.0")}&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      byBranch.push(...page.items.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(byBranch).toEqual([...ids].reverse());

    expect((await list(`commit=${commit}`)).items).toHaveLength(4);
    const both = await list(`branch=${encodeURIComponent("release/2.0")}&commit=${commit}`);
    expect(both.items.map((e) => e.id)).toEqual(ids.slice(0, 3).reverse());
    expect((await list("branch=nothing-here")).items).toEqual([]);
  });

  it("is part of the Idempotency-Key's request: the same key with other ci is 422", async () => {
    const key = `ci-${Date.now()}`;
    const headers = { ...acme, "idempotency-key": key };
    const first = await run({ test_plan_id: plan, ...target, ci: { commit: "abc123" } }, headers);
    expect(first.status).toBe(200);
    const replay = await run({ test_plan_id: plan, ...target, ci: { commit: "abc123" } }, headers);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.execution.id).toBe(first.body.execution.id);
    const other = await run({ test_plan_id: plan, ...target, ci: { commit: "def456" } }, headers);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_key_reused");
  });
});
