import path from "node:path";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { BlobStore } from "../../storage/index.ts";
import type { AuditLog } from "../audit/index.ts";
import type { DeviceRuns } from "../device-runs/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import { ExecutionsRepo } from "./executions.repo.ts";
import { executionsRoutes } from "./executions.routes.ts";
import { ExecutionsService } from "./executions.service.ts";
import { LogStore } from "./log-store.ts";
import { ResultsRepo } from "./results.repo.ts";
import { type QuarantinedTests, resultsRoutes } from "./results.routes.ts";
import type { CapableAgent } from "./waiting-reason.ts";

export interface ExecutionsDeps {
  database: DatabaseHandle;
  clock: Clock;
  log: FastifyBaseLogger;
  store: BlobStore;
  config: Pick<Config, "dataDir" | "maxExecutionLogBytes">;
  audit: AuditLog;
  /** Told of every changed execution (features/live). */
  changes: ExecutionChanges;
  runs: DeviceRuns;
  /** The organization's online agents, to say why a queued execution waits (features/agent's registry). */
  onlineAgents: (organizationId: string) => Promise<CapableAgent[]>;
  /** Which tests are quarantined, for the tests of an execution (features/tests). */
  quarantines: QuarantinedTests;
}

/**
 * Executions' composition root: executions, their results and logs (which agents write, through the
 * agent feature), their routes, and on start the log chunks a stopped server left staged.
 */
export function createExecutions(deps: ExecutionsDeps) {
  const { database, clock, store, config, changes } = deps;
  const results = new ResultsRepo(database.db);
  const logs = new LogStore({
    db: database.db,
    store,
    stagingDir: path.join(config.dataDir, "tmp", "logs"),
    maxExecutionBytes: config.maxExecutionLogBytes,
  });
  const executions = new ExecutionsService(
    new ExecutionsRepo(database.db, results),
    clock,
    deps.onlineAgents,
    deps.audit,
    (organizationId, executionId) => changes.changed(organizationId, executionId),
    deps.runs,
  );
  return {
    executions,
    results,
    logs,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(executionsRoutes, { executions });
      await app.register(resultsRoutes, { executions, results, logs, store, quarantines: deps.quarantines });
    },
    async start(): Promise<void> {
      await logs.startUp(deps.log);
    },
  };
}
