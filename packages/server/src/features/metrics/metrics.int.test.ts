/**
 * GET /metrics as Prometheus reads it (API.md §15): Debian's real `prometheus` scrapes a real server every second
 * with the bearer token, and the queue gauge, an execution counter and the request histogram are read back
 * through Prometheus's HTTP API; `promtool check metrics` accepts the exposition. Runs on SQLite and PostgreSQL
 * (the shared gauges are one query written for both).
 */
import { stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import { TestReceiver } from "../webhooks/test-receiver.ts";
import { type PrometheusProcess, promtoolComplaints, startPrometheus, until } from "./prometheus.fixture.ts";

const token = "metrics-token-0f9c2b7e";
const env = {
  TESTBAY_METRICS: "true",
  TESTBAY_METRICS_TOKEN: token,
  TESTBAY_RATE_LIMIT_BURST: "100000",
  TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
  TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true",
};
const basicApk = new URL("../../../test/fixtures/binaries/app-basic.apk", import.meta.url);
const pixel7 = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };

let server: TestServer;
let prometheus: PrometheusProcess | undefined;
let ci: Record<string, string>;
let agent: Record<string, string>;

const scrape = async (headers: Record<string, string> = { authorization: `Bearer ${token}` }) =>
  await fetch(`${server.origin}/metrics`, { headers });

async function queueRun(): Promise<string> {
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status).toBe(200);
  return run.body.execution.id;
}

let planId: string;

beforeAll(async () => {
  server = await startTestServer({ env });
  ci = { "x-api-key": await server.token(await server.createClient("metrics-org", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("metrics-org", "agent")) };
  await registerBasicApp(server, ci);
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "smoke",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
    },
  });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
});

afterAll(async () => {
  await prometheus?.stop();
  await server?.close();
});

describe("GET /metrics", () => {
  it("answers 401 with a problem without the token and with a wrong one", async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: token },
    ];
    for (const headers of attempts) {
      const response = await scrape(headers);
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const problem = (await response.json()) as { fix: string };
      expect(problem).toMatchObject({ status: 401, code: "invalid_access_token" });
      expect(problem.fix).toContain("TESTBAY_METRICS_TOKEN");
    }
  });

  it("is read by a real Prometheus: the queue gauge, a finished-execution counter and the request histogram", async () => {
    // One run started on the Pixel and passed, two more waiting for a device.
    const passed = await queueRun();
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "rack-1", devices: [pixel7], step_types: ["maestro"] },
    });
    expect(claimed.status).toBe(200);
    expect(claimed.body.job.execution_id).toBe(passed);
    const done = await call(`${server.baseUrl}/agent/jobs/${claimed.body.job.lease_id}/complete`, {
      headers: agent,
      json: { status: "passed" },
    });
    expect(done.status).toBe(200);
    const waiting = [await queueRun(), await queueRun()];
    for (const id of [passed, ...waiting]) {
      expect((await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).status).toBe(200);
    }

    const exposition = await (await scrape()).text();
    expect(await promtoolComplaints(exposition)).toBe("");

    const { port } = new URL(server.origin);
    prometheus = await startPrometheus({ host: "127.0.0.1", port: Number(port), token });
    const read = prometheus;
    await until("Prometheus to scrape the server", async () => (await read.value('up{job="testbay"}')) === 1);
    expect(await read.value('testbay_executions_queued{platform="android"}')).toBe(2);
    expect(await read.value('testbay_executions_finished_total{status="passed"}')).toBe(1);
    expect(await read.value('testbay_executions_finished_total{status="failed"}')).toBe(0);
    expect(await read.value('testbay_execution_queue_seconds_count{platform="android"}')).toBe(1);
    expect(await read.value("testbay_agents_online")).toBe(1);
    expect(await read.value('testbay_devices{platform="android",state="idle"}')).toBe(1);
    expect(await read.value("testbay_upload_bytes_total")).toBe((await stat(basicApk)).size);
    // The request histogram, by route template: three GETs of three executions are one series.
    const gets = await read.query(
      'testbay_http_request_duration_seconds_count{method="GET",route="/v1/executions/:id"}',
    );
    expect(gets).toEqual([{ metric: expect.any(Object), value: 3 }]);
    expect(
      await read.value(
        'testbay_http_request_duration_seconds_bucket{method="POST",route="/v1/testplan/run",le="+Inf"}',
      ),
    ).toBe(3);
    // No route label is a raw path: no execution ID, no query string.
    const routes = await read.query("count by (route) (testbay_http_requests_total)");
    const labels = routes.map((sample) => sample.metric.route);
    expect(labels).toContain("/v1/executions/:id");
    expect(labels.filter((route) => /exe_|\?/.test(route ?? ""))).toEqual([]);
  });

  it("counts a path no route has as unmatched, never by the path asked for", async () => {
    expect((await fetch(`${server.origin}/no/such/thing-0123`, { method: "DELETE" })).status).toBe(404);
    const text = await (await scrape()).text();
    expect(text).toContain('testbay_http_requests_total{method="DELETE",route="unmatched",status="404"} 1');
    expect(text).not.toContain("thing-0123");
  });

  it("reads the shared gauges the same on every instance, while counters stay per instance", async () => {
    const other = await startTestServer({ env, shareWith: server, clock: server.clock });
    try {
      const gauges = (text: string) =>
        text
          .split("\n")
          .filter((line) =>
            /^testbay_(executions_queued|device_runs_running|agents_online|devices)\b/.test(line),
          )
          .sort();
      const [here, there] = await Promise.all(
        [server, other].map(async (instance) => {
          const response = await fetch(`${instance.origin}/metrics`, {
            headers: { authorization: `Bearer ${token}` },
          });
          return await response.text();
        }),
      );
      expect(gauges(there as string)).toEqual(gauges(here as string));
      expect(gauges(there as string)).toContain('testbay_executions_queued{platform="android"} 2');
      expect(there).toContain('testbay_executions_finished_total{status="passed"} 0');
      expect(here).toContain('testbay_executions_finished_total{status="passed"} 1');
    } finally {
      await other.close();
    }
  });
});

describe("without TESTBAY_METRICS", () => {
  it("serves no /metrics: a scrape gets 404", async () => {
    const plain = await startTestServer();
    try {
      const response = await fetch(`${plain.origin}/metrics`, {
        headers: { accept: "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5" },
      });
      expect(response.status).toBe(404);
      expect(await response.text()).not.toContain("testbay_http_requests_total");
    } finally {
      await plain.close();
    }
  });
});

describe("what the features count", () => {
  /** The value of one sample line of this server's exposition, once it reads `expected`. */
  const sampleReaches = (line: string, expected: number) =>
    until(`${line} to read ${expected}`, async () => {
      const text = await (await scrape()).text();
      const value = text.split("\n").find((sample) => sample.startsWith(`${line} `));
      return value !== undefined && Number(value.slice(line.length + 1)) === expected;
    });

  it("counts webhook attempts by result, and the lag of delivered ones", async () => {
    const target = await TestReceiver.start();
    try {
      const created = await call(`${server.baseUrl}/webhooks`, {
        headers: ci,
        json: { url: target.url, events: ["execution.finished"] },
      });
      expect(created.status).toBe(201);
      target.answers.push({ status: 500, body: "down for a moment" });
      const test = () =>
        call(`${server.baseUrl}/webhooks/${created.body.id}/test`, { method: "POST", headers: ci });
      expect((await test()).status).toBe(202);
      await target.requests(1);
      await sampleReaches('testbay_webhook_deliveries_total{result="retrying"}', 1);
      expect((await test()).status).toBe(202);
      await target.requests(2);
      await sampleReaches('testbay_webhook_deliveries_total{result="delivered"}', 1);
      await sampleReaches("testbay_webhook_delivery_lag_seconds_count", 1);
    } finally {
      await target.close();
    }
  });

  it("counts a cancelled queued execution as finished cancelled, and the queue gauge drops", async () => {
    const queued = await queueRun();
    await sampleReaches('testbay_executions_queued{platform="android"}', 3);
    const cancelled = await call(`${server.baseUrl}/executions/${queued}/cancel`, {
      method: "POST",
      headers: ci,
    });
    expect(cancelled.status).toBe(200);
    await sampleReaches('testbay_executions_finished_total{status="cancelled"}', 1);
    await sampleReaches('testbay_executions_queued{platform="android"}', 2);
  });
});
