import type { FastifyBaseLogger } from "fastify";
import { type Clock, isoTime } from "../../clock.ts";
import { ApiError, remedy } from "../../errors.ts";
import { serverActor } from "../audit/index.ts";
import type { TestPlanRecord, TestPlansService } from "../testplans/index.ts";
import type { TriggersService } from "../triggers/index.ts";
import { CronSchedule } from "./cron-schedule.ts";
import { parseScheduleVersion } from "./schedule-version.ts";
import type { LastResult, ScheduleRecord, SchedulesRepo } from "./schedules.repo.ts";

/** Where the versions a schedule can run are looked up (versions and executions, schedules.feature.ts). */
export interface VersionSource {
  /** The app's most recently uploaded version still kept, or undefined when it has none. */
  newest(organizationId: string, packageName: string): Promise<string | undefined>;
  /** The version of the app's most recent execution whose ci.branch is `branch`, or undefined. */
  ofBranch(organizationId: string, packageName: string, branch: string): Promise<string | undefined>;
}

export interface ScheduleFiringDeps {
  repo: SchedulesRepo;
  plans: TestPlansService;
  versions: VersionSource;
  /** The triggers feature's trigger (TriggersService.trigger): the one writer of executions. */
  trigger: TriggersService["trigger"];
  clock: Clock;
  log: FastifyBaseLogger;
  /** Due schedules taken per look; more wait for the next look. */
  batch?: number;
}

/**
 * Fires due schedules: every instance looks on its own timer (start()), and a time fires on the instance whose
 * claim (SchedulesRepo.claim) moves the schedule's next time on first, so each time fires once however many
 * instances look, and whichever of them is running. No instance holds a lease that another must wait out.
 *
 * Times are not queued up: when no instance looked for a while (all were stopped), the times missed fire once
 * together when one looks again, and the next time is counted from then.
 */
export class ScheduleFiring {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly deps: ScheduleFiringDeps) {}

  /** Looks every `intervalMs` (TESTBAY_SCHEDULES_TICK_MS), one look at a time, until stop(). */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      if (this.round || this.stopped) return;
      this.round = this.tick()
        .catch((error) =>
          this.deps.log.error({ job: "fire due schedules", err: error }, "background job failed"),
        )
        .finally(() => {
          this.round = undefined;
        });
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops looking and waits for the look under way, so nothing fires once the server has closed. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round;
  }

  /** One look: claims and fires each schedule due now. Returns how many times this instance fired. */
  async tick(): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.repo.due(isoTime(now), this.deps.batch ?? 100);
    let fired = 0;
    for (const schedule of due) {
      if (this.stopped) break;
      const times = CronSchedule.stored(schedule.cron, schedule.timezone);
      // From the later of the due time and now: times missed while nobody looked are not fired one by one.
      const next = times?.nextAfter(Math.max(Date.parse(schedule.nextRunAt), now)) ?? null;
      const claimed = await this.deps.repo.claim(
        schedule.id,
        schedule.nextRunAt,
        next === null ? null : isoTime(next),
      );
      if (!claimed) continue;
      await this.fire(claimed, schedule.nextRunAt);
      fired++;
    }
    return fired;
  }

  /** Triggers the plan for the time `scheduledFor` and records what became of it as last_result. */
  private async fire(schedule: ScheduleRecord, scheduledFor: string): Promise<void> {
    let result: LastResult;
    try {
      result = await this.run(schedule, scheduledFor);
    } catch (error) {
      this.deps.log.error({ schedule_id: schedule.id, err: error }, "scheduled run could not be triggered");
      result = skipped(
        scheduledFor,
        "The server failed while triggering the plan (its log says why: look for this schedule's ID).",
        "Nothing to change in the schedule; the next time is tried again. If it keeps failing, check the server's database.",
      );
    }
    await this.deps.repo.recordResult(schedule.id, result);
    this.deps.log.info(
      {
        schedule_id: schedule.id,
        test_plan_id: schedule.testPlanId,
        scheduled_for: scheduledFor,
        outcome: result.outcome,
        execution_id: result.execution_id,
      },
      result.outcome === "triggered" ? "scheduled run triggered" : "scheduled run skipped",
    );
  }

  private async run(schedule: ScheduleRecord, scheduledFor: string): Promise<LastResult> {
    let plan: TestPlanRecord;
    try {
      plan = await this.deps.plans.get(schedule.organizationId, schedule.testPlanId);
    } catch (error) {
      if (error instanceof ApiError) return skipped(scheduledFor, error.detail, error.fix);
      throw error;
    }
    const wanted = parseScheduleVersion(schedule.version);
    const version = await this.versionFor(schedule, plan, wanted);
    if (typeof version !== "string") return skipped(scheduledFor, version.detail, version.fix);
    let outcome: Awaited<ReturnType<TriggersService["trigger"]>>;
    try {
      outcome = await this.deps.trigger({
        organizationId: schedule.organizationId,
        clientId: schedule.createdBy,
        actor: serverActor,
        packageName: plan.packageName,
        version,
        testPlanIds: [plan.id],
        env: {},
        ci: { provider: "schedule", ...(wanted.kind === "branch" ? { branch: wanted.branch } : {}) },
      });
    } catch (error) {
      // The whole trigger was refused (the app or the version is not there): as a trigger over HTTP says it.
      if (error instanceof ApiError) return skipped(scheduledFor, error.detail, error.fix);
      throw error;
    }
    const [execution] = outcome.executions;
    if (execution) {
      return {
        scheduled_for: scheduledFor,
        outcome: "triggered",
        execution_id: execution.id,
        version,
        detail: `Triggered execution ${execution.id} of ${plan.packageName} ${version}.`,
        fix: null,
      };
    }
    const [failed] = outcome.failed;
    return {
      ...skipped(scheduledFor, failed?.detail ?? "The plan was not triggered.", failed?.fix ?? null),
      version,
    };
  }

  /** The version to run, or why there is none. */
  private async versionFor(
    schedule: ScheduleRecord,
    plan: TestPlanRecord,
    wanted: ReturnType<typeof parseScheduleVersion>,
  ): Promise<string | { detail: string; fix: string }> {
    const { organizationId } = schedule;
    if (wanted.kind === "named") return wanted.version;
    if (wanted.kind === "latest") {
      return (
        (await this.deps.versions.newest(organizationId, plan.packageName)) ?? {
          detail: `No version of ${plan.packageName} has been uploaded, so there was no latest version to run.`,
          fix: remedy.uploadVersion(plan.packageName, "V"),
        }
      );
    }
    return (
      (await this.deps.versions.ofBranch(organizationId, plan.packageName, wanted.branch)) ?? {
        detail: `No execution of ${plan.packageName} has ci.branch ${JSON.stringify(wanted.branch)}, so there was no version of that branch to run.`,
        fix: `Trigger a run of the branch's build with ci.branch set (testbay run or testbay trigger inside the CI job of branch ${wanted.branch} sets it), or run another version: PATCH /v1/schedules/${schedule.id} {"version":"latest"} (or a version's name).`,
      }
    );
  }
}

function skipped(scheduledFor: string, detail: string, fix: string | null): LastResult {
  return { scheduled_for: scheduledFor, outcome: "skipped", execution_id: null, version: null, detail, fix };
}
