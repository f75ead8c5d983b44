import type { FastifyInstance } from "fastify";
import type { BackgroundJobs } from "../../background-jobs.ts";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { AppsService } from "../apps/index.ts";
import type { AuditLog } from "../audit/index.ts";
import { TestPlansRepo } from "./testplans.repo.ts";
import { testPlansRoutes } from "./testplans.routes.ts";
import { TestPlansService } from "./testplans.service.ts";

export interface TestPlansDeps {
  database: DatabaseHandle;
  clock: Clock;
  apps: AppsService;
  audit: AuditLog;
}

/** Test plans' composition root: the plans, their routes, and the purge of plans deleted long enough ago. */
export function createTestPlans({ database, clock, apps, audit }: TestPlansDeps) {
  const plans = new TestPlansService(new TestPlansRepo(database.db), apps, clock, audit);
  return {
    plans,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(testPlansRoutes, { plans });
    },
    async start(jobs: BackgroundJobs): Promise<void> {
      await jobs.hourly("purge deleted test plans", () => plans.purgeExpired());
    },
  };
}
