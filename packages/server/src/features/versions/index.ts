export {
  VersionFileName,
  type VersionFileRecord,
  VersionFilesService,
  versionFileLimits,
  versionFileNotFound,
} from "./files/index.ts";
export type { BinaryMetadata } from "./inspection/index.ts";
export {
  InstrumentationTest,
  type TestPackageRecord,
  TestPackagesRepo,
  TestPackagesService,
  testPackageContent,
  testPackagesRoutes,
  XctestTest,
} from "./test-packages/index.ts";
export { createVersions } from "./versions.feature.ts";
export { type VersionRecord, VersionsRepo } from "./versions.repo.ts";
export { versionsRoutes } from "./versions.routes.ts";
export { VersionId } from "./versions.schemas.ts";
export { VersionsService, versionView } from "./versions.service.ts";
