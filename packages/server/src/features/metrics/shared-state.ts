/**
 * The gauges that describe state every instance shares (API.md §15: the queue, device runs, agents, devices),
 * read from the database so that each instance reports the same numbers, in one query per scrape. It stays
 * cheap with a million executions: queued executions are found through device_runs' (status, created_at)
 * index (migration 2026-11-22-0004), never by scanning executions, and the rest are the running runs and the
 * agents seen lately.
 */
import { type Kysely, sql } from "kysely";
import { isoTime } from "../../clock.ts";
import type { Database } from "../../db/schema.ts";

export interface SharedState {
  /** Queued executions by the platform of their first device entry (`host`: a plan without devices). */
  queued: Map<string, number>;
  deviceRunsRunning: number;
  agentsOnline: number;
  /** The online agents' devices, counted by platform and state. */
  devices: Array<{ platform: string; state: string; count: number }>;
}

/** As GET /v1/agents calls an agent online (features/agent/agents.repo.ts onlineWindowMs): seen within 75 s. */
export const onlineWindowMs = 75_000;

interface Row {
  kind: "queued" | "running" | "agent" | "busy";
  a: string | null;
  b: string | null;
  c: string | null;
  n: number | string;
}

interface DeviceJson {
  serial: string;
  platform: string;
  state?: string;
}

/**
 * Reads the shared state at `now` (the server's clock). One statement, four parts: queued executions (the
 * first device entry's first shard, which exists for every execution and is queued while it is), the number of
 * running device runs, the online agents' device lists, and the devices running runs hold.
 */
export async function readSharedState(db: Kysely<Database>, now: number): Promise<SharedState> {
  const since = isoTime(now - onlineWindowMs);
  const { rows } = await sql<Row>`
    select 'queued' as kind, coalesce(dr.required_platform, 'host') as a, cast(null as text) as b,
      cast(null as text) as c, count(*) as n
    from device_runs dr join executions e on e.id = dr.execution_id
    where dr.status = 'queued' and dr.position = 0 and dr.shard = 0 and e.status = 'queued'
    group by coalesce(dr.required_platform, 'host')
    union all
    select 'running', null, null, null, count(*) from device_runs where status = 'running'
    union all
    select 'agent', organization_id || ' ' || id, devices, drained_devices, 0 from agents
    where last_seen_at >= ${since}
    union all
    select 'busy', organization_id || ' ' || agent_id, claimed_device, null, 0 from device_runs
    where status = 'running' and claimed_device is not null`.execute(db);
  return sharedStateOf(rows);
}

/** The rows of readSharedState's query as the gauges' values; apart from the query so tests can feed it rows. */
export function sharedStateOf(rows: readonly Row[]): SharedState {
  const queued = new Map<string, number>();
  let deviceRunsRunning = 0;
  const agents = rows.filter((row) => row.kind === "agent");
  const online = new Set(agents.map((row) => row.a));
  // A device is busy while a run is leased on it, whatever the agent's last claim said (it offers free ones).
  const busy = rows
    .filter((row) => row.kind === "busy" && online.has(row.a) && row.b !== null)
    .map((row) => ({ agent: row.a, device: JSON.parse(row.b as string) as DeviceJson }));
  const busySerials = new Set(busy.map(({ agent, device }) => `${agent} ${device.serial}`));
  const counts = new Map<string, { platform: string; state: string; count: number }>();
  const count = (platform: string, state: string) => {
    const key = `${platform} ${state}`;
    const entry = counts.get(key) ?? { platform, state, count: 0 };
    entry.count++;
    counts.set(key, entry);
  };
  for (const row of rows) {
    if (row.kind === "queued") queued.set(row.a ?? "host", Number(row.n));
    if (row.kind === "running") deviceRunsRunning = Number(row.n);
  }
  for (const agent of agents) {
    const notBusy = (d: DeviceJson) => !busySerials.has(`${agent.a} ${d.serial}`);
    for (const d of parseDevices(agent.b).filter(notBusy)) count(d.platform, d.state ?? "idle");
    for (const d of parseDevices(agent.c).filter(notBusy)) count(d.platform, d.state ?? "drained");
  }
  for (const { device } of busy) count(device.platform, "busy");
  return { queued, deviceRunsRunning, agentsOnline: agents.length, devices: [...counts.values()] };
}

function parseDevices(json: string | null): DeviceJson[] {
  return json === null ? [] : (JSON.parse(json) as DeviceJson[]);
}
