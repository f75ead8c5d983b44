export { IdempotencyStore } from "./idempotency.ts";
export { triggersRoutes } from "./triggers.routes.ts";
export { TriggersService } from "./triggers.service.ts";
