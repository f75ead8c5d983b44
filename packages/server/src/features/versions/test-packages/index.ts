export { type TestPackageRecord, TestPackagesRepo } from "./test-packages.repo.ts";
export { testPackagesRoutes } from "./test-packages.routes.ts";
export { TestPackagesService } from "./test-packages.service.ts";
