export { testPackageContent } from "./test-package-format.ts";
export { type TestPackageContent, type TestPackageRecord, TestPackagesRepo } from "./test-packages.repo.ts";
export { testPackagesRoutes } from "./test-packages.routes.ts";
export { InstrumentationTest, XctestTest } from "./test-packages.schemas.ts";
export { TestPackagesService } from "./test-packages.service.ts";
