import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { BlobStore } from "../../storage/index.ts";
import type { ExecutionsService, ResultsRepo } from "../executions/index.ts";
import type { QuarantinedTests } from "../executions/results.routes.ts";
import type { FailureGroupsOfExecution } from "./report-model.ts";
import { ReportSource } from "./report-source.ts";
import { reportsRoutes } from "./reports.routes.ts";
import { StoredFailureGroups } from "./stored-failure-groups.ts";

export interface ReportsDeps {
  database: DatabaseHandle;
  clock: Clock;
  store: BlobStore;
  executions: ExecutionsService;
  results: ResultsRepo;
  quarantines: QuarantinedTests;
  /**
   * The failures' groups (API.md §16); by default the signatures stored on the test cases (stored-failure-groups.ts).
   * Null: the report says this server does not group failures.
   */
  failureGroups?: FailureGroupsOfExecution | null;
}

/**
 * Reports' composition root: an execution as a report to share (one HTML file) and as CTRF JSON (API.md §16),
 * both read from what the executions feature keeps; this feature writes no table.
 */
export function createReports(deps: ReportsDeps) {
  const failureGroups =
    deps.failureGroups === undefined
      ? new StoredFailureGroups(deps.database.db)
      : (deps.failureGroups ?? undefined);
  const source = new ReportSource({ ...deps, failureGroups });
  return {
    async register(app: FastifyInstance): Promise<void> {
      await app.register(reportsRoutes, { source });
    },
  };
}
