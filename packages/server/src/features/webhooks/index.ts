export { type ResolveAll, systemResolveAll } from "./address-guard.ts";
export { CoalescedRound } from "./coalesced-round.ts";
export { DeliveryWorker, sendBackstopMs } from "./delivery-worker.ts";
export { type EventDescriber, fanOutBackstopMs, fanOutWakeGapMs, WebhookFanOut } from "./fan-out.ts";
export { SecretBox } from "./secret-box.ts";
export { AttemptSender } from "./send-attempt.ts";
export { WebhooksRepo } from "./webhooks.repo.ts";
export { webhooksRoutes } from "./webhooks.routes.ts";
export { WebhooksService } from "./webhooks.service.ts";
