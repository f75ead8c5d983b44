import type { DatabaseHandle } from "../../db/kysely.ts";
import type { Meters } from "../metrics/index.ts";
import { DeviceRuns } from "./device-runs.ts";

/** Device runs' composition root: one DeviceRuns for the server, shared by executions (cancel) and agents. */
export function createDeviceRuns({
  database,
  meters,
}: {
  database: DatabaseHandle;
  meters?: Meters | undefined;
}) {
  return { runs: new DeviceRuns(database.db, database.dialect, meters) };
}
