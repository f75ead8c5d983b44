import type { FastifyInstance } from "fastify";
import type { PostgresNotifications } from "../../db/postgres-notifications.ts";
import { eventsRoutes } from "./events.routes.ts";
import { ExecutionChanges } from "./execution-changes.ts";
import { postgresExecutionChanges } from "./postgres-execution-changes.ts";

/**
 * Live updates' composition root: which executions changed, for dashboards (GET /v1/events) and for what
 * else reacts to a change (the webhooks' fan-out). With several instances on PostgreSQL a change reaches
 * the others through its notifications; one process on SQLite keeps them in memory.
 */
export function createLive({ notifications }: { notifications: PostgresNotifications | undefined }) {
  const changes = notifications ? postgresExecutionChanges(notifications) : new ExecutionChanges();
  return {
    changes,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(eventsRoutes, { changes });
    },
    async stop(): Promise<void> {
      changes.close();
    },
  };
}
