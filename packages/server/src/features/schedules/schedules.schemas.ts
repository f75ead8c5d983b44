import { Type } from "typebox";
import type { ScheduleRecord } from "./schedules.repo.ts";

const Cron = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'When to run, as croner reads it: five fields (minute hour day-of-month month day-of-week, "0 2 * * *" for 02:00 every day) or six with seconds first ("*/30 * * * * *"). A wrong expression is a 400 invalid_request whose errors name /cron.',
  examples: ["0 2 * * *", "0 6 * * 1-5"],
});

const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description:
    "The IANA time zone the cron expression is read in (default UTC); times follow its daylight saving changes: a time the spring change skips runs at the first time after the gap, a time the autumn change repeats runs once.",
  examples: ["UTC", "Europe/Berlin"],
});

const Version = Type.String({
  minLength: 1,
  maxLength: 300,
  description:
    'Which version runs: "latest" (the app\'s most recently uploaded version), "latest:branch=NAME" (the version of the most recent execution whose ci.branch is NAME), or a version\'s name.',
  examples: ["latest", "latest:branch=main", "1.4.2"],
});

export const ScheduleId = Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_]+$" });
export const ScheduleParams = Type.Object({ id: ScheduleId });
export const PlanScheduleParams = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: "^[A-Za-z0-9_]+$",
    description: "The test plan's ID",
  }),
});

export const CreateScheduleBody = Type.Object(
  { cron: Cron, timezone: Type.Optional(TimeZone), version: Version },
  { additionalProperties: false },
);

export const UpdateScheduleBody = Type.Object(
  {
    cron: Type.Optional(Cron),
    timezone: Type.Optional(TimeZone),
    version: Type.Optional(Version),
    enabled: Type.Optional(
      Type.Boolean({ description: "false: no time fires until it is true again (counted from then)" }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

const LastResult = Type.Union(
  [
    Type.Object({
      scheduled_for: Type.String({ format: "date-time", description: "The time it was for" }),
      outcome: Type.Union([Type.Literal("triggered"), Type.Literal("skipped")], {
        description: "triggered: an execution was queued; skipped: nothing ran at that time, detail says why",
      }),
      execution_id: Type.Union([Type.String(), Type.Null()]),
      version: Type.Union([Type.String(), Type.Null()], { description: "The version it ran, or null" }),
      detail: Type.String(),
      fix: Type.Union([Type.String(), Type.Null()], {
        description: "What to do so that the next time runs; null when it ran",
      }),
    }),
    Type.Null(),
  ],
  { description: "What became of the last time; null before the first" },
);

export const ScheduleView = Type.Object({
  id: Type.String({ description: "sch_…" }),
  test_plan_id: Type.String(),
  cron: Type.String(),
  timezone: Type.String({ description: "As the tz database names it (utc is UTC)" }),
  version: Type.String(),
  next_run_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "The next time it runs; null while disabled",
  }),
  enabled: Type.Boolean(),
  last_result: LastResult,
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
});

export const ScheduleList = Type.Object({
  items: Type.Array(ScheduleView, { description: "The plan's schedules, oldest first (at most 20)" }),
});

export function scheduleView(schedule: ScheduleRecord) {
  return {
    id: schedule.id,
    test_plan_id: schedule.testPlanId,
    cron: schedule.cron,
    timezone: schedule.timezone,
    version: schedule.version,
    next_run_at: schedule.nextRunAt,
    enabled: schedule.enabled,
    last_result: schedule.lastResult,
    created_at: schedule.createdAt,
    updated_at: schedule.updatedAt,
  };
}
