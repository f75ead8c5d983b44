export { QuarantineRepo } from "./quarantine.repo.ts";
export { quarantineRoutes } from "./quarantine.routes.ts";
export { QuarantineService } from "./quarantine.service.ts";
export { TestHistoryRepo } from "./test-history.repo.ts";
export { TestHistoryService } from "./test-history.service.ts";
export { createTests } from "./tests.feature.ts";
export { testsRoutes } from "./tests.routes.ts";
