export { TestHistoryRepo } from "./test-history.repo.ts";
export { TestHistoryService } from "./test-history.service.ts";
export { testsRoutes } from "./tests.routes.ts";
