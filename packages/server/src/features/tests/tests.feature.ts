import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { AuditLog } from "../audit/index.ts";
import type { TestPlansService } from "../testplans/index.ts";
import { QuarantineRepo } from "./quarantine.repo.ts";
import { quarantineRoutes } from "./quarantine.routes.ts";
import { QuarantineService } from "./quarantine.service.ts";
import { TestHistoryRepo } from "./test-history.repo.ts";
import { TestHistoryService } from "./test-history.service.ts";
import { testsRoutes } from "./tests.routes.ts";

export interface TestsDeps {
  database: DatabaseHandle;
  clock: Clock;
  audit: AuditLog;
  plans: TestPlansService;
}

/** Tests' composition root: a plan's tests with their history, and quarantines (which results also read). */
export function createTests({ database, clock, audit, plans }: TestsDeps) {
  const quarantineRepo = new QuarantineRepo(database.db);
  const quarantines = new QuarantineService(quarantineRepo, audit, clock);
  const history = new TestHistoryService(new TestHistoryRepo(database.db), plans, quarantineRepo);
  return {
    quarantines,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(testsRoutes, { history });
      await app.register(quarantineRoutes, { quarantines });
    },
  };
}
