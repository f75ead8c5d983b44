/** The events an endpoint can subscribe to (API.md §9); webhook.test is sent by POST /test whatever they are. */
export const subscribableEvents = [
  "execution.started",
  "execution.finished",
  "version.uploaded",
  "test.flaky_detected",
] as const;

export type SubscribableEvent = (typeof subscribableEvents)[number];

export const testEvent = "webhook.test";
