export { defaultWebDir, webRoutes } from "./web.routes.ts";
