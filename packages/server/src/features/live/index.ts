export { eventsRoutes } from "./events.routes.ts";
export { type ExecutionChange, ExecutionChanges } from "./execution-changes.ts";
export { createLive } from "./live.feature.ts";
export { postgresExecutionChanges } from "./postgres-execution-changes.ts";
