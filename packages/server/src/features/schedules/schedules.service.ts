import type { Static } from "typebox";
import { type Clock, isoTime } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { Actor, AuditLog } from "../audit/index.ts";
import { type TestPlansService, testPlanNotFound } from "../testplans/index.ts";
import { CronSchedule } from "./cron-schedule.ts";
import { parseScheduleVersion } from "./schedule-version.ts";
import type { ScheduleRecord, SchedulesRepo } from "./schedules.repo.ts";
import type { CreateScheduleBody, UpdateScheduleBody } from "./schedules.schemas.ts";

/** Schedules one plan may have: a few times of day per plan is what people set up; more is a mistake in a loop. */
export const maxSchedulesPerPlan = 20;

function scheduleNotFound(id: string): ApiError {
  return new ApiError("schedule_not_found", { reason: "unknown", detail: `There is no schedule ${id}.` });
}

/** What the audit log keeps of a schedule: enough to read what ran when, without looking it up. */
const auditDetails = (schedule: ScheduleRecord) => ({
  test_plan_id: schedule.testPlanId,
  cron: schedule.cron,
  timezone: schedule.timezone,
  version: schedule.version,
  enabled: schedule.enabled,
});

/**
 * A plan's schedules (API.md §15): made, listed, changed and deleted; fired by ScheduleFiring. Each change is in
 * the audit log with who made it, as webhooks' are (webhooks.service.ts): a schedule starts runs in the
 * organization's name long after the person who set it up has left the page.
 */
export class SchedulesService {
  constructor(
    private readonly repo: SchedulesRepo,
    private readonly plans: TestPlansService,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  /**
   * Adds a schedule to an active plan of the organization. `createdBy` (a client's ID, or a person's `usr_…`)
   * is who its runs say triggered them.
   */
  async create(
    organizationId: string,
    testPlanId: string,
    body: Static<typeof CreateScheduleBody>,
    createdBy: string,
    actor: Actor,
  ): Promise<ScheduleRecord> {
    const plan = await this.plans.get(organizationId, testPlanId);
    if (plan.state !== "active") throw testPlanNotFound(plan.id, plan.state);
    const now = this.clock.now();
    const times = CronSchedule.parse(body.cron, body.timezone ?? "UTC", now);
    parseScheduleVersion(body.version);
    if ((await this.repo.countForPlan(plan.id)) >= maxSchedulesPerPlan) {
      throw new ApiError("invalid_request", {
        reason: "too_many_schedules",
        detail: `Test plan ${plan.id} has ${maxSchedulesPerPlan} schedules, the most a plan may have.`,
        fix: `Delete one it no longer needs (DELETE /v1/schedules/{id}, or testbay schedules delete ID; testbay schedules list --plan ${plan.id} lists them), or change one with PATCH /v1/schedules/{id}: a cron expression can name several times ("0 2,14 * * *").`,
      });
    }
    const schedule: ScheduleRecord = {
      id: newId("sch", now),
      organizationId,
      testPlanId: plan.id,
      cron: times.cron,
      timezone: times.timezone,
      version: body.version,
      enabled: true,
      nextRunAt: nextTime(times, now),
      lastResult: null,
      createdBy,
      createdAt: isoTime(now),
      updatedAt: isoTime(now),
    };
    await this.repo.insert(schedule);
    await this.record(organizationId, actor, "schedule.created", schedule.id, auditDetails(schedule));
    return schedule;
  }

  /** The plan's schedules, whatever the plan's state; another organization's plan is not found. */
  async list(organizationId: string, testPlanId: string): Promise<ScheduleRecord[]> {
    const plan = await this.plans.get(organizationId, testPlanId);
    return this.repo.listForPlan(organizationId, plan.id);
  }

  async get(organizationId: string, id: string): Promise<ScheduleRecord> {
    const schedule = await this.repo.find(organizationId, id);
    if (!schedule) throw scheduleNotFound(id);
    return schedule;
  }

  /**
   * Changes what the body gives. A new cron, time zone or enabling counts the next time from now; disabling
   * clears it; a new version alone leaves the next time where it is.
   */
  async update(
    organizationId: string,
    id: string,
    patch: Static<typeof UpdateScheduleBody>,
    actor: Actor,
  ): Promise<ScheduleRecord> {
    const current = await this.get(organizationId, id);
    const now = this.clock.now();
    const times = CronSchedule.parse(patch.cron ?? current.cron, patch.timezone ?? current.timezone, now);
    if (patch.version !== undefined) parseScheduleVersion(patch.version);
    const enabled = patch.enabled ?? current.enabled;
    const timesChanged =
      times.cron !== current.cron || times.timezone !== current.timezone || enabled !== current.enabled;
    const updated = await this.repo.update(organizationId, id, {
      cron: times.cron,
      timezone: times.timezone,
      version: patch.version ?? current.version,
      enabled,
      updatedAt: isoTime(now),
      ...(timesChanged ? { nextRunAt: enabled ? nextTime(times, now) : null } : {}),
    });
    if (!updated) throw scheduleNotFound(id);
    await this.record(organizationId, actor, "schedule.updated", id, {
      ...auditDetails(updated),
      changed: Object.keys(patch).sort(),
    });
    return updated;
  }

  async delete(organizationId: string, id: string, actor: Actor): Promise<void> {
    const schedule = await this.get(organizationId, id);
    if (!(await this.repo.delete(organizationId, id))) throw scheduleNotFound(id);
    await this.record(organizationId, actor, "schedule.deleted", id, auditDetails(schedule));
  }

  private record(
    organizationId: string,
    actor: Actor,
    action: "schedule.created" | "schedule.updated" | "schedule.deleted",
    id: string,
    details: Record<string, unknown>,
  ) {
    return this.audit.record({ organizationId, actor, action, target: { type: "schedule", id }, details });
  }
}

/** The first time after `now`; parse() has made sure there is one. */
function nextTime(times: CronSchedule, now: number): string | null {
  const next = times.nextAfter(now);
  return next === null ? null : isoTime(next);
}
