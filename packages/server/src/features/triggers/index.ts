export { IdempotencyStore } from "./idempotency.ts";
export { createTriggers } from "./triggers.feature.ts";
export { triggersRoutes } from "./triggers.routes.ts";
export { TriggersService } from "./triggers.service.ts";
