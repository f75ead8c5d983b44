export { defaultDownloadsDir, downloads, downloadsRoutes } from "./downloads.routes.ts";
export { serverVersion } from "./server-version.ts";
