import type { FastifyInstance } from "fastify";
import type { BackgroundJobs } from "../../background-jobs.ts";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { WorkSignal } from "../agent/index.ts";
import type { AuditLog } from "../audit/index.ts";
import type { ExecutionsService } from "../executions/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import type { TestPlansService } from "../testplans/index.ts";
import type { VersionsService } from "../versions/index.ts";
import { IdempotencyStore } from "./idempotency.ts";
import { triggersRoutes } from "./triggers.routes.ts";
import { TriggersService } from "./triggers.service.ts";

export interface TriggersDeps {
  database: DatabaseHandle;
  clock: Clock;
  audit: AuditLog;
  versions: VersionsService;
  plans: TestPlansService;
  executions: ExecutionsService;
  /** Wakes the agents waiting in a claim for the organization's new work (features/agent). */
  workSignal: WorkSignal;
  /** Tells the organization's dashboards of the executions queued (features/live). */
  changes: ExecutionChanges;
}

/** Triggers' composition root: running a plan (queuing executions), idempotency keys and their expiry. */
export function createTriggers({
  database,
  clock,
  audit,
  executions,
  workSignal,
  changes,
  ...deps
}: TriggersDeps) {
  const triggers = new TriggersService(
    deps.versions,
    deps.plans,
    executions.repo,
    clock,
    (organizationId, executionIds) => {
      workSignal.notify(organizationId);
      for (const id of executionIds) changes.changed(organizationId, id);
    },
    audit,
  );
  const idempotency = new IdempotencyStore(database.db, clock);
  return {
    triggers,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(triggersRoutes, { triggers, idempotency, executions });
    },
    async start(jobs: BackgroundJobs): Promise<void> {
      await jobs.hourly("forget expired idempotency keys", () => idempotency.purgeExpired());
    },
  };
}
