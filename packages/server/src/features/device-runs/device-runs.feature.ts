import type { DatabaseHandle } from "../../db/kysely.ts";
import { DeviceRuns } from "./device-runs.ts";

/** Device runs' composition root: one DeviceRuns for the server, shared by executions (cancel) and agents. */
export function createDeviceRuns({ database }: { database: DatabaseHandle }) {
  return { runs: new DeviceRuns(database.db, database.dialect) };
}
