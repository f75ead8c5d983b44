import type { FastifyInstance } from "fastify";
import type { BackgroundJobs } from "../../background-jobs.ts";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import { createAgentRegistry, type WorkSignal } from "../agent/index.ts";
import type { AuditLog } from "../audit/index.ts";
import { expectedDurations } from "../device-runs/index.ts";
import type { ExecutionsService } from "../executions/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import type { TestPlansService } from "../testplans/index.ts";
import type { VersionsService } from "../versions/index.ts";
import type { ShardFactsSource } from "./auto-shard-plan.ts";
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
  // shards: "auto" (API.md §13): the plan's tests' p80s as sharding by duration reads them, and the agents
  // online as the waiting reason sees them (the registry is only a view of the agents table).
  const online = createAgentRegistry({ database, clock });
  const shardFacts: ShardFactsSource = {
    testsMs: async (organizationId, testPlanId) => {
      const expected = await expectedDurations(database.db, organizationId, testPlanId);
      return expected.size === 0 ? null : [...expected.values()].reduce((sum, ms) => sum + ms, 0);
    },
    onlineAgents: online.onlineAgents,
  };
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
    shardFacts,
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
