import { describe, expect, it } from "vitest";
import { Testbay } from "./client.ts";
import { FakeClock, seededRandom } from "./clock.ts";
import { TestbayApiError, TestbayGaveUpError, TestbayNetworkError } from "./errors.ts";

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Answer = Response | Error;

/** A fetch that records each request and answers from a script per "METHOD /path" (the last answer repeats). */
function fakeFetch(script: Record<string, Answer[]>) {
  const sent: Sent[] = [];
  const fetch = async (input: string, init: RequestInit): Promise<Response> => {
    const url = new URL(input);
    const method = init.method ?? "GET";
    const key = `${method} ${url.pathname.replace(/^\/v1/, "")}`;
    sent.push({
      method,
      path: url.pathname.replace(/^\/v1/, ""),
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === "string" ? init.body : undefined,
    });
    const answers = script[key] ?? [problem(404, "route_not_found")];
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    if (answer instanceof Error) throw answer;
    return (answer as Response).clone();
  };
  return { fetch, sent, count: (key: string) => sent.filter((s) => `${s.method} ${s.path}` === key).length };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(
    status,
    { status, code, detail: `${code} detail`, fix: `${code} fix`, retryable: status === 429 },
    headers,
  );
const tokenAnswer = () =>
  json(200, {
    access_token: "tok",
    token_type: "api-key",
    expires_in: 86_400,
    expires_at: "2026-01-02T00:00:00Z",
  });
const dropped = () =>
  new TypeError("fetch failed", {
    cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
  });

function client(script: Record<string, Answer[]>, options: { token?: string } = {}) {
  const fake = fakeFetch({ "POST /oauth/token": [tokenAnswer()], ...script });
  const clock = new FakeClock();
  const testbay = new Testbay({
    baseUrl: "http://testbay.invalid/v1",
    clientId: "cl_1",
    clientSecret: "secret",
    fetch: fake.fetch,
    clock,
    random: seededRandom(1),
    ...options,
  });
  return { testbay, clock, ...fake };
}

const batch = { package_name: "com.example", version: "1.0", test_plan_ids: ["tp_1"] };
const batchOk = () => json(200, { executions: [], failed_executions: [] });

describe("Testbay SDK calls", () => {
  it("requests one token for many calls and sends it as x-api-key, never as Bearer", async () => {
    const { testbay, sent, count } = client({ "GET /apps": [json(200, { items: [], next_cursor: null })] });
    for (let i = 0; i < 25; i++) await testbay.apps.list();
    expect(count("POST /oauth/token")).toBe(1);
    const calls = sent.filter((s) => s.path === "/apps");
    expect(calls).toHaveLength(25);
    for (const call of calls) {
      expect(call.headers["x-api-key"]).toBe("tok");
      expect(call.headers.authorization).toBeUndefined();
    }
    expect(JSON.parse(sent[0]?.body ?? "{}")).toMatchObject({ client_id: "cl_1", audience: "testbay" });
  });

  it("with a token given up front makes no token call", async () => {
    const { testbay, count, sent } = client({ "GET /me": [json(200, {})] }, { token: "env-token" });
    await testbay.me();
    await testbay.me();
    expect(count("POST /oauth/token")).toBe(0);
    expect(sent.map((s) => s.headers["x-api-key"])).toEqual(["env-token", "env-token"]);
  });

  it("sends one trigger's Idempotency-Key unchanged on every attempt, and a new one per trigger", async () => {
    const { testbay, sent } = client({
      "POST /testplan/run/batch": [
        problem(502, "bad_gateway"),
        dropped(),
        problem(429, "rate_limited"),
        batchOk(),
      ],
    });
    const result = await testbay.triggers.runBatch(batch);
    const keys = sent
      .filter((s) => s.path === "/testplan/run/batch")
      .map((s) => s.headers["idempotency-key"]);
    expect(keys).toHaveLength(4);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.idempotency_key).toBe(keys[0]);

    await testbay.triggers.runBatch(batch);
    const last = sent.at(-1)?.headers["idempotency-key"];
    expect(last).toBeDefined();
    expect(last).not.toBe(keys[0]);
  });

  it("retries a network error on GET and on a keyed POST, never on a POST without a key", async () => {
    const get = client({ "GET /apps/com.example": [dropped(), json(200, { package_name: "com.example" })] });
    await expect(get.testbay.apps.get("com.example")).resolves.toMatchObject({ package_name: "com.example" });
    expect(get.count("GET /apps/com.example")).toBe(2);

    const post = client({ "POST /apps": [dropped(), json(201, {})] });
    const error = await post.testbay.apps
      .create({ package_name: "com.example", platform: "android" })
      .catch((e) => e);
    expect(error).toBeInstanceOf(TestbayNetworkError);
    expect(error.message).toMatch(/ECONNRESET/);
    expect(post.count("POST /apps")).toBe(1);

    const run = client({ "POST /testplan/run": [dropped(), json(200, { execution: { id: "ex_1" } })] });
    await expect(
      run.testbay.triggers.run({ test_plan_id: "tp_1", package_name: "com.example", version: "1" }),
    ).resolves.toMatchObject({ execution: { id: "ex_1" } });
    expect(run.count("POST /testplan/run")).toBe(2);
  });

  it("never retries 400, 401, 403, 404, 409, 413, 422 or 500, and keeps code, detail and fix", async () => {
    for (const status of [400, 401, 403, 404, 409, 413, 422, 500]) {
      const { testbay, count } = client({ "GET /testplans/tp_1": [problem(status, `code_${status}`)] });
      const error = await testbay.testPlans.get("tp_1").catch((e) => e);
      expect(error, `${status}`).toBeInstanceOf(TestbayApiError);
      expect(error).toMatchObject({
        status,
        code: `code_${status}`,
        detail: `code_${status} detail`,
        fix: `code_${status} fix`,
      });
      expect(count("GET /testplans/tp_1"), `${status}`).toBe(1);
    }
  });

  it("gives up after 6 attempts of 502 with the waits of the seeded backoff", async () => {
    const { testbay, clock, count } = client({ "GET /me": [problem(502, "bad_gateway")] });
    const error = await testbay.me().catch((e) => e);
    expect(error).toBeInstanceOf(TestbayGaveUpError);
    expect(count("GET /me")).toBe(6);
    expect(clock.sleeps).toHaveLength(5);
    clock.sleeps.forEach((ms, n) => {
      expect(ms).toBeLessThan(500 * 2 ** n);
    });
  });

  it("treats a batch with failures as data to read, and a batch that started nothing as an error listing them", async () => {
    const failed = {
      test_plan_id: "tp_2",
      status: 404,
      code: "test_plan_not_found",
      reason: "archived",
      detail: "d",
      fix: "f",
    };
    const partial = client({
      "POST /testplan/run/batch": [json(207, { executions: [{ id: "ex_1" }], failed_executions: [failed] })],
    });
    const result = await partial.testbay.triggers.runBatch(batch);
    expect(result).toMatchObject({ status: 207, failed_executions: [failed] });

    const none = client({
      "POST /testplan/run/batch": [
        json(404, { status: 404, code: "test_plan_not_found", executions: [], failed_executions: [failed] }),
      ],
    });
    const error = await none.testbay.triggers.runBatch(batch).catch((e) => e);
    expect(error).toBeInstanceOf(TestbayApiError);
    expect(error.failedExecutions).toEqual([failed]);
  });
});
