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

/**
 * Whom an agent serves: the organization of its agent client, or every organization (a fleet agent, whose client
 * was made with `client create --role agent --all-orgs`, API.md §15).
 */
export type AgentServes = "own_organization" | "all_organizations";

export interface AgentView {
  id: string;
  name: string;
  serves: AgentServes;
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
    serves: AgentServes,
    now: number,
  ): Promise<void> {
    const row = {
      last_seen_at: isoTime(now),
      // From the claiming client (the principal's allOrganizations), like the rest of the row: a host whose agent
      // restarts with another client serves as that client does from its next claim on.
      all_organizations: serves === "all_organizations" ? 1 : 0,
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

  /**
   * A heartbeat renews its agent's last_seen_at (the agent that holds the lease). The run's organization and the
   * agent's differ for a fleet agent (an `--all-orgs` client holding another organization's run): its row is under
   * its client's organization, `agentOrganizationId`.
   */
  async heartbeat(
    organizationId: string,
    leaseId: string,
    now: number,
    agentOrganizationId: string = organizationId,
  ): Promise<void> {
    await this.db
      .updateTable("agents")
      .set({ last_seen_at: isoTime(now) })
      .where("organization_id", "=", agentOrganizationId)
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
   * The agents that serve the organization, with what they run now: its own and the fleet agents (any
   * organization's agents whose client serves all of them). A device is busy while a run is leased on it; the
   * devices a claim offers are only the free ones, so busy devices come from the running runs.
   *
   * A fleet agent's runs of other organizations make its devices busy, but nothing else of them is shown: their
   * execution IDs, and which organizations they belong to, are not this organization's to see.
   */
  async list(organizationId: string, now: number): Promise<AgentView[]> {
    const agents = await this.db
      .selectFrom("agents")
      .selectAll()
      .where((eb) => eb.or([eb("organization_id", "=", organizationId), eb("all_organizations", "=", 1)]))
      .orderBy("id")
      .orderBy("organization_id")
      .execute();
    if (agents.length === 0) return [];
    const running = await this.db
      .selectFrom("device_runs")
      .select(["agent_id", "execution_id", "claimed_device"])
      .where("organization_id", "=", organizationId)
      .where("status", "=", "running")
      .execute();
    const elsewhere = await this.fleetDevicesElsewhere(organizationId, agents);
    const since = isoTime(now - onlineWindowMs);
    return agents.map((agent) => {
      const fleet = agent.all_organizations === 1;
      // device_runs names the agent by the id it claimed with, not by its client's organization: a run of this
      // organization is a fleet agent's unless the organization has its own agent of that id.
      const ownsRun = (agentId: string | null) =>
        agentId === agent.id &&
        (agent.organization_id === organizationId ||
          !agents.some((other) => other.organization_id === organizationId && other.id === agentId));
      const mine = running.filter((run) => ownsRun(run.agent_id));
      const busy = [
        ...mine.flatMap((run) =>
          run.claimed_device === null ? [] : [JSON.parse(run.claimed_device) as AgentDevice],
        ),
        ...(fleet ? elsewhere(agent) : []),
      ];
      const busySerials = new Set(busy.map((d) => d.serial));
      const free = (JSON.parse(agent.devices) as AgentDevice[]).filter((d) => !busySerials.has(d.serial));
      const drained = (JSON.parse(agent.drained_devices) as AgentDevice[]).filter(
        (d) => !busySerials.has(d.serial),
      );
      return {
        id: agent.id,
        name: agent.name,
        serves: fleet ? ("all_organizations" as const) : ("own_organization" as const),
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
        // Only this organization's executions, also for a fleet agent busy with others'.
        running: [...new Set(mine.map((run) => run.execution_id))],
        appium: agent.appium === null ? null : (JSON.parse(agent.appium) as AgentAppium),
      };
    });
  }

  /**
   * The devices the listed fleet agents hold for other organizations' runs: only the devices, never the
   * executions or their organizations. device_runs names an agent by the id it claimed with, so a run of an
   * organization that has an agent of that id is that agent's (its own, or a fleet agent of that organization),
   * and otherwise the fleet agents' of that id.
   */
  private async fleetDevicesElsewhere(
    organizationId: string,
    listed: ReadonlyArray<{ organization_id: string; id: string; all_organizations: number }>,
  ): Promise<(agent: { organization_id: string; id: string }) => AgentDevice[]> {
    const fleetIds = [...new Set(listed.filter((a) => a.all_organizations === 1).map((a) => a.id))];
    if (fleetIds.length === 0) return () => [];
    const runs = await this.db
      .selectFrom("device_runs")
      .select(["agent_id", "organization_id", "claimed_device"])
      .where("status", "=", "running")
      .where("agent_id", "in", fleetIds)
      .where("organization_id", "<>", organizationId)
      .where("claimed_device", "is not", null)
      .execute();
    if (runs.length === 0) return () => [];
    const namesakes = await this.db
      .selectFrom("agents")
      .select(["organization_id", "id", "all_organizations"])
      .where("id", "in", fleetIds)
      .execute();
    const rowKey = (org: string | null, id: string | null) => `${org}\u0000${id}`;
    const rows = new Map(namesakes.map((a) => [rowKey(a.organization_id, a.id), a.all_organizations]));
    // Held by a known row ("org\0id"), or by whichever fleet agent has the id ("\0id").
    const held = new Map<string, AgentDevice[]>();
    for (const run of runs) {
      const own = rows.get(rowKey(run.organization_id, run.agent_id));
      if (own === 0) continue;
      const key = own === 1 ? rowKey(run.organization_id, run.agent_id) : rowKey("", run.agent_id);
      held.set(key, [...(held.get(key) ?? []), JSON.parse(run.claimed_device as string) as AgentDevice]);
    }
    return (agent) => [
      ...(held.get(rowKey(agent.organization_id, agent.id)) ?? []),
      ...(held.get(rowKey("", agent.id)) ?? []),
    ];
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
