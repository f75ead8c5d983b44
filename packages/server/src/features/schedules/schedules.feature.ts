import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { AuditLog } from "../audit/index.ts";
import type { ExecutionsService } from "../executions/index.ts";
import type { TestPlansService } from "../testplans/index.ts";
import type { TriggersService } from "../triggers/index.ts";
import type { VersionsService } from "../versions/index.ts";
import { ScheduleFiring, type VersionSource } from "./schedule-firing.ts";
import { SchedulesRepo } from "./schedules.repo.ts";
import { schedulesRoutes } from "./schedules.routes.ts";
import { SchedulesService } from "./schedules.service.ts";

export interface SchedulesDeps {
  database: DatabaseHandle;
  clock: Clock;
  log: FastifyBaseLogger;
  plans: TestPlansService;
  versions: VersionsService;
  /** The branch's latest version is read from the executions' ci.branch (API.md §15). */
  executions: ExecutionsService;
  /** Scheduled runs are queued by the triggers feature, the one writer of executions. */
  triggers: TriggersService;
  /** How often this instance looks for due schedules (TESTBAY_SCHEDULES_TICK_MS). */
  tickMs: number;
  /** Who made, changed and deleted a schedule. */
  audit: AuditLog;
}

/**
 * Schedules' composition root (API.md §15): the routes on plans' schedules, and the look for due times that
 * every instance runs on its own timer until the server closes (schedule-firing.ts).
 */
export function createSchedules({
  database,
  clock,
  log,
  plans,
  versions,
  executions,
  triggers,
  tickMs,
  audit,
}: SchedulesDeps) {
  const repo = new SchedulesRepo(database.db);
  const schedules = new SchedulesService(repo, plans, clock, audit);
  const versionSource: VersionSource = {
    async newest(organizationId, packageName) {
      try {
        const page = await versions.list(organizationId, packageName, { limit: 1 });
        return page.items[0]?.version;
      } catch {
        // The app is gone (or was never registered): it has no version to run.
        return undefined;
      }
    },
    async ofBranch(organizationId, packageName, branch) {
      // Newest first on executions_org_ci_branch_idx; a WebDriver session has no version and is passed over.
      const [latest] = await executions.repo.list(organizationId, { packageName, branch }, 1, undefined);
      return latest?.version ?? undefined;
    },
  };
  const firing = new ScheduleFiring({
    repo,
    plans,
    versions: versionSource,
    trigger: (request) => triggers.trigger(request),
    clock,
    log,
  });
  return {
    schedules,
    firing,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(schedulesRoutes, { schedules });
    },
    async start(): Promise<void> {
      firing.start(tickMs);
    },
    async stop(): Promise<void> {
      await firing.stop();
    },
  };
}
