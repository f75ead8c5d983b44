export { CronSchedule } from "./cron-schedule.ts";
export { ScheduleFiring, type VersionSource } from "./schedule-firing.ts";
export { parseScheduleVersion, type ScheduleVersion } from "./schedule-version.ts";
export { createSchedules } from "./schedules.feature.ts";
export { type LastResult, type ScheduleRecord, SchedulesRepo } from "./schedules.repo.ts";
export { schedulesRoutes } from "./schedules.routes.ts";
export { SchedulesService } from "./schedules.service.ts";
