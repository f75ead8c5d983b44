import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { TestPlansService } from "../testplans/index.ts";
import { FailuresRepo } from "./failures.repo.ts";
import { failuresRoutes } from "./failures.routes.ts";
import { FailuresService } from "./failures.service.ts";
import { trendsRoutes } from "./trends.routes.ts";

export interface FailuresDeps {
  database: DatabaseHandle;
  clock: Clock;
  plans: TestPlansService;
}

/**
 * Failures' composition root (API.md §16): failure groups and a plan's trends, read from the groups' rows and the
 * test cases device-runs stores (each failed one with its signature, device-runs/test-cases-query.ts, which
 * brings the groups' rows up to date through failure-groups.writer.ts). Its routes write nothing.
 */
export function createFailures({ database, clock, plans }: FailuresDeps) {
  const failures = new FailuresService(new FailuresRepo(database.db), clock);
  return {
    failures,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(failuresRoutes, { failures });
      await app.register(trendsRoutes, { db: database.db, clock, plans });
    },
  };
}
