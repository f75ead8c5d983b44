export { type VersionFileRecord, VersionFilesRepo } from "./version-files.repo.ts";
export { versionFilesRoutes } from "./version-files.routes.ts";
export { VersionFileName } from "./version-files.schemas.ts";
export { VersionFilesService, versionFileLimits, versionFileNotFound } from "./version-files.service.ts";
