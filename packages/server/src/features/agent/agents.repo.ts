import type { Kysely } from "kysely";
import { isoTime } from "../../clock.ts";
import type { Database } from "../../db/schema.ts";
import { type AgentDevice, type DeviceState, stepTypeSet } from "../device-runs/index.ts";

/**
 * An agent is online while it was seen within two claim long-polls (each waits at most 30 s, and an idle
 * agent claims again as soon as one ends; a busy one heartbeats more often than that), plus a margin for a
 * slow network or a restart: one missed poll is no reason to call it gone.
 */
export const onlineWindowMs = 2 * 30_000 + 15_000;

/** What an agent started with --appium offers (API.md §12): the claim's `appium`, as GET /agents shows it. */
export interface AgentAppium {
  version: string;
  drivers: Array<{ name: string; automation_name: string; platform_names: string[] }>;
}

export interface AgentView {
  id: string;
  name: string;
  online: boolean;
  last_seen_at: string;
  step_types: string[];
  devices: Array<AgentDevice & { state: DeviceState }>;
  running: string[];
  /** null: the agent's last claim offered no Appium. */
  appium: AgentAppium | null;
}

/** The agents each organization has seen, from their claims (upsert) and heartbeats (last_seen_at). */
export class AgentsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records a claim: one statement, since claims are the hot path. */
  async seen(
    organizationId: string,
    agentId: string,
    stepTypes: readonly string[],
    devices: readonly AgentDevice[],
    drainedDevices: readonly AgentDevice[],
    appium: AgentAppium | null,
    now: number,
  ): Promise<void> {
    const row = {
      last_seen_at: isoTime(now),
      step_types: stepTypeSet(stepTypes),
      devices: devicesJson(devices),
      drained_devices: devicesJson(drainedDevices),
      // Replaced by every claim, like the devices: an agent restarted without --appium offers none.
      appium: appium === null ? null : appiumJson(appium),
    };
    await this.db
      .insertInto("agents")
      .values({ organization_id: organizationId, id: agentId, name: agentId, ...row })
      .onConflict((oc) => oc.columns(["organization_id", "id"]).doUpdateSet(row))
      .execute();
  }

  /** A heartbeat renews its agent's last_seen_at (the agent that holds the lease). */
  async heartbeat(organizationId: string, leaseId: string, now: number): Promise<void> {
    await this.db
      .updateTable("agents")
      .set({ last_seen_at: isoTime(now) })
      .where("organization_id", "=", organizationId)
      .where("id", "in", (eb) =>
        eb
          .selectFrom("device_runs")
          .select("agent_id")
          .where("lease_id", "=", leaseId)
          .where("organization_id", "=", organizationId),
      )
      .execute();
  }

  /**
   * The organization's agents with what they run now. A device is busy while a run is leased on it; the
   * devices a claim offers are only the free ones, so busy devices come from the running runs.
   */
  async list(organizationId: string, now: number): Promise<AgentView[]> {
    const agents = await this.db
      .selectFrom("agents")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .orderBy("id")
      .execute();
    if (agents.length === 0) return [];
    const running = await this.db
      .selectFrom("device_runs")
      .select(["agent_id", "execution_id", "claimed_device"])
      .where("organization_id", "=", organizationId)
      .where("status", "=", "running")
      .execute();
    const since = isoTime(now - onlineWindowMs);
    return agents.map((agent) => {
      const mine = running.filter((run) => run.agent_id === agent.id);
      const busy = mine.flatMap((run) =>
        run.claimed_device === null ? [] : [JSON.parse(run.claimed_device) as AgentDevice],
      );
      const busySerials = new Set(busy.map((d) => d.serial));
      const free = (JSON.parse(agent.devices) as AgentDevice[]).filter((d) => !busySerials.has(d.serial));
      const drained = (JSON.parse(agent.drained_devices) as AgentDevice[]).filter(
        (d) => !busySerials.has(d.serial),
      );
      return {
        id: agent.id,
        name: agent.name,
        online: agent.last_seen_at >= since,
        last_seen_at: agent.last_seen_at,
        step_types: agent.step_types === "" ? [] : agent.step_types.split(","),
        // What the agent said of each device (API.md §13), or what its list says for older agents: the free
        // ones idle, the drained ones drained; busy while a run is leased on it whatever the agent said.
        devices: [
          ...free.map((d) => ({ ...d, state: d.state ?? ("idle" as const) })),
          ...busy.map((d) => ({ ...d, state: "busy" as const })),
          ...drained.map((d) => ({ ...d, state: d.state ?? ("drained" as const) })),
        ].sort((a, b) => (a.serial < b.serial ? -1 : a.serial > b.serial ? 1 : 0)),
        running: [...new Set(mine.map((run) => run.execution_id))],
        appium: agent.appium === null ? null : (JSON.parse(agent.appium) as AgentAppium),
      };
    });
  }
}

/**
 * Only the members a device has (device-runs/types.ts AgentDevice), those the agent did not send left out:
 * a claim's device objects are stored as the agent described them, nothing more.
 */
function devicesJson(devices: readonly AgentDevice[]): string {
  return JSON.stringify(devices.map(deviceRecord));
}

export function deviceRecord(d: AgentDevice): AgentDevice {
  const optional = {
    api_level: d.api_level,
    abi: d.abi,
    emulator: d.emulator,
    managed: d.managed,
    pool: d.pool,
    labels: d.labels,
    state: d.state,
    error: d.error,
    boot_ms: d.boot_ms,
  };
  return {
    serial: d.serial,
    platform: d.platform,
    model: d.model,
    os_version: d.os_version,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}

/** Only the members the claim's schema names, in its order: stored as the view shows them. */
function appiumJson(appium: AgentAppium): string {
  return JSON.stringify({
    version: appium.version,
    drivers: appium.drivers.map((d) => ({
      name: d.name,
      automation_name: d.automation_name,
      platform_names: [...d.platform_names],
    })),
  });
}
