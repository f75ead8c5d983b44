import { describe, expect, it } from "vitest";
import { metricNames } from "./metric-names.ts";
import { createMetricsRegistry, refusedDefaultMetrics } from "./metrics-registry.ts";
import type { SharedState } from "./shared-state.ts";

const idle = (): SharedState => ({ queued: new Map(), deviceRunsRunning: 0, agentsOnline: 0, devices: [] });

/** The sample lines of one metric family, as `name{labels} value`. */
const samples = (text: string, name: string) =>
  text.split("\n").filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));

describe("createMetricsRegistry", () => {
  it("exposes every name API.md §15 fixes, with their types", async () => {
    const { registry } = createMetricsRegistry(async () => idle(), Date.now);
    const text = await registry.metrics();
    const types = Object.fromEntries(
      [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1], match[2]]),
    );
    expect(types).toMatchObject({
      [metricNames.httpRequests]: "counter",
      [metricNames.httpRequestDuration]: "histogram",
      [metricNames.executionsFinished]: "counter",
      [metricNames.executionQueue]: "histogram",
      [metricNames.executionsQueued]: "gauge",
      [metricNames.deviceRunsRunning]: "gauge",
      [metricNames.agentsOnline]: "gauge",
      [metricNames.devices]: "gauge",
      [metricNames.webhookDeliveries]: "counter",
      [metricNames.webhookDeliveryLag]: "histogram",
      [metricNames.uploadBytes]: "counter",
      process_cpu_seconds_total: "counter",
      nodejs_heap_size_used_bytes: "gauge",
    });
    // promtool refuses a gauge named like a counter; prom-client's three are left out.
    const totalGauges = Object.entries(types).filter(
      ([name, type]) => type === "gauge" && name.endsWith("_total"),
    );
    expect(totalGauges).toEqual([]);
    for (const name of refusedDefaultMetrics) expect(text).not.toContain(name);
    expect(text).toContain("nodejs_active_handles ");
  });

  it("starts the finished and delivery counters at 0 for every label value, so rate() sees them at once", async () => {
    const { registry } = createMetricsRegistry(async () => idle(), Date.now);
    const text = await registry.metrics();
    expect(samples(text, metricNames.executionsFinished).sort()).toEqual([
      'testbay_executions_finished_total{status="cancelled"} 0',
      'testbay_executions_finished_total{status="errored"} 0',
      'testbay_executions_finished_total{status="failed"} 0',
      'testbay_executions_finished_total{status="passed"} 0',
    ]);
    expect(samples(text, metricNames.webhookDeliveries)).toHaveLength(3);
  });

  it("counts what the features report, per registry: two servers in one process keep their own counts", async () => {
    const now = Date.parse("2026-11-28T10:00:30.000Z");
    const first = createMetricsRegistry(
      async () => idle(),
      () => now,
    );
    const second = createMetricsRegistry(
      async () => idle(),
      () => now,
    );
    first.meters.executionFinished("passed");
    first.meters.executionFinished("passed");
    first.meters.executionStarted("android", "2026-11-28T10:00:00.000Z", "2026-11-28T10:00:12.000Z");
    first.meters.webhookAttempt("delivered", "2026-11-28T10:00:00.000Z");
    first.meters.webhookAttempt("retrying", "2026-11-28T10:00:00.000Z");
    first.meters.uploaded(1234);
    first.meters.uploaded(66);
    first.observeRequest({ method: "GET", route: "/v1/executions/:id", status: 200, seconds: 0.02 });
    const text = await first.registry.metrics();
    expect(text).toContain('testbay_executions_finished_total{status="passed"} 2');
    expect(text).toContain('testbay_execution_queue_seconds_bucket{le="15",platform="android"} 1');
    expect(text).toContain('testbay_execution_queue_seconds_bucket{le="5",platform="android"} 0');
    expect(text).toContain('testbay_execution_queue_seconds_sum{platform="android"} 12');
    expect(text).toContain('testbay_webhook_deliveries_total{result="delivered"} 1');
    expect(text).toContain('testbay_webhook_deliveries_total{result="retrying"} 1');
    // Only the delivered attempt has a lag: 30 s after the delivery was made.
    expect(text).toContain("testbay_webhook_delivery_lag_seconds_count 1");
    expect(text).toContain("testbay_webhook_delivery_lag_seconds_sum 30");
    expect(text).toContain("testbay_upload_bytes_total 1300");
    expect(text).toContain(
      'testbay_http_requests_total{method="GET",route="/v1/executions/:id",status="200"} 1',
    );
    expect(text).toContain(
      'testbay_http_request_duration_seconds_count{method="GET",route="/v1/executions/:id"} 1',
    );
    const other = await second.registry.metrics();
    expect(other).toContain('testbay_executions_finished_total{status="passed"} 0');
    expect(other).toContain("testbay_upload_bytes_total 0");
    expect(samples(other, metricNames.httpRequests)).toEqual([]);
  });

  it("fills the shared gauges from the state read at each scrape, dropping what is gone", async () => {
    let state: SharedState = {
      queued: new Map([
        ["android", 3],
        ["host", 1],
      ]),
      deviceRunsRunning: 2,
      agentsOnline: 1,
      devices: [
        { platform: "android", state: "busy", count: 2 },
        { platform: "android", state: "idle", count: 1 },
      ],
    };
    const { registry } = createMetricsRegistry(async () => state, Date.now);
    let text = await registry.metrics();
    expect(samples(text, metricNames.executionsQueued).sort()).toEqual([
      'testbay_executions_queued{platform="android"} 3',
      'testbay_executions_queued{platform="host"} 1',
    ]);
    expect(text).toContain("testbay_device_runs_running 2");
    expect(text).toContain("testbay_agents_online 1");
    expect(text).toContain('testbay_devices{platform="android",state="busy"} 2');
    state = { queued: new Map([["android", 1]]), deviceRunsRunning: 0, agentsOnline: 0, devices: [] };
    text = await registry.metrics();
    expect(samples(text, metricNames.executionsQueued)).toEqual([
      'testbay_executions_queued{platform="android"} 1',
    ]);
    expect(samples(text, metricNames.devices)).toEqual([]);
    expect(text).toContain("testbay_agents_online 0");
  });
});
