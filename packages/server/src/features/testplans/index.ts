export { devicesProblems } from "./plan-checks.ts";
export { createTestPlans } from "./testplans.feature.ts";
export type { TestPlanRecord } from "./testplans.repo.ts";
export { TestPlansRepo } from "./testplans.repo.ts";
export { testPlansRoutes } from "./testplans.routes.ts";
export { DeviceSpec, type Step, versionFileNamePattern } from "./testplans.schemas.ts";
export { TestPlansService, testPlanNotFound, testPlanView } from "./testplans.service.ts";
