export { buildApp } from "./app.ts";
export type { AppOptions } from "./app-options.ts";
export { type Clock, ManualClock, systemClock } from "./clock.ts";
export { type Config, ConfigError, loadConfig } from "./config.ts";
export { type RunningServer, startServer } from "./main.ts";
