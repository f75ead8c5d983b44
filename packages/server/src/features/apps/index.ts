export { createApps } from "./apps.feature.ts";
export type { AppRecord } from "./apps.repo.ts";
export { AppsRepo } from "./apps.repo.ts";
export { appsRoutes } from "./apps.routes.ts";
export { PackageName, Platform, packageNamePattern } from "./apps.schemas.ts";
export { AppsService, appView } from "./apps.service.ts";
