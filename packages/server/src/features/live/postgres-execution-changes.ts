import type { PostgresNotifications } from "../../db/postgres-notifications.ts";
import { ExecutionChanges } from "./execution-changes.ts";

const channel = "testbay_execution_changes";

/** Execution changes seen by the dashboards of every API instance on one PostgreSQL database. */
export function postgresExecutionChanges(notifications: PostgresNotifications): ExecutionChanges {
  const changes = new ExecutionChanges({ broadcast: (message) => notifications.notify(channel, message) });
  notifications.on(channel, (message) => changes.receive(message));
  return changes;
}
