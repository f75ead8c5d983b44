export { apiIndexRoutes } from "./api-index.routes.ts";
