export type { DeviceRunRecord, ExecutionRecord } from "./executions.repo.ts";
export { ExecutionsRepo } from "./executions.repo.ts";
export { executionsRoutes } from "./executions.routes.ts";
export { ExecutionView } from "./executions.schemas.ts";
export { ExecutionsService, emptySummary, executionView } from "./executions.service.ts";
