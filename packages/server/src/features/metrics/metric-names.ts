/**
 * The metric names, labels and buckets API.md §15 fixes, so that alerts and dashboards (docs/grafana-dashboard.json)
 * written against them keep working. Names follow Prometheus's conventions: base units (`_seconds`, `_bytes`),
 * `_total` only on counters, and label values from small fixed sets (routes are templates, never raw paths).
 */
export const metricNames = {
  httpRequests: "testbay_http_requests_total",
  httpRequestDuration: "testbay_http_request_duration_seconds",
  executionsFinished: "testbay_executions_finished_total",
  executionQueue: "testbay_execution_queue_seconds",
  executionsQueued: "testbay_executions_queued",
  deviceRunsRunning: "testbay_device_runs_running",
  agentsOnline: "testbay_agents_online",
  devices: "testbay_devices",
  webhookDeliveries: "testbay_webhook_deliveries_total",
  webhookDeliveryLag: "testbay_webhook_delivery_lag_seconds",
  uploadBytes: "testbay_upload_bytes_total",
} as const;

/** Requests from a few milliseconds up to the agents' 30 s claim long polls and large uploads. */
export const httpDurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** A queue wait from an idle fleet's second to a busy fleet's hours. */
export const queueBuckets = [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600];

/** A delivery's lag: the first attempt within a second, retries after the schedule's 5 s … 8 h waits. */
export const webhookLagBuckets = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400];

/** Label values counted from 0 before the first event, so that rate() and alerts see the series at once. */
export const finishedStatuses = ["passed", "failed", "errored", "cancelled"] as const;
export const webhookResults = ["delivered", "retrying", "failed"] as const;

/** `route` of a request no route matched (a 404): one fixed value, so scanners cannot grow the label set. */
export const unmatchedRoute = "unmatched";
