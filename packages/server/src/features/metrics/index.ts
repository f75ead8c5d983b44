export type { Meters, WebhookAttemptResult } from "./meters.ts";
export { createMetrics } from "./metrics.feature.ts";
