import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { agentsQuery } from "../../api/catalog.ts";
import type { Agent } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { AgentDevices } from "./agent-devices.tsx";

function AgentCard({ agent }: { agent: Agent }) {
  return (
    <li className="space-y-3 rounded-lg border border-line bg-surface p-4">
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="font-semibold break-all">{agent.name}</h2>
        <span
          className={`rounded-full px-2 py-0.5 text-xs font-medium ${
            agent.online
              ? "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100"
              : "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200"
          }`}
        >
          {agent.online ? "online" : "offline"}
        </span>
        {agent.serves === "all_organizations" && (
          // An --all-orgs agent client's (API.md §15): it takes other organizations' runs too, shown only as busy devices.
          <span
            className="rounded-full bg-sky-100 px-2 py-0.5 text-xs font-medium text-sky-900 dark:bg-sky-900 dark:text-sky-100"
            title="Serves every organization: devices busy with other organizations' runs show as busy"
          >
            shared fleet
          </span>
        )}
        <span className="ml-auto text-xs text-muted">
          last seen <Timestamp value={agent.last_seen_at} />
        </span>
      </div>
      <div className="text-sm text-muted">
        steps: {agent.step_types.join(", ") || "none"}
        {agent.running.length > 0 && (
          <>
            {" · running "}
            {agent.running.map((id, index) => (
              <span key={id}>
                {index > 0 && ", "}
                <Link to="/runs/$runId" params={{ runId: id }} className="text-accent hover:underline">
                  {id}
                </Link>
              </span>
            ))}
          </>
        )}
      </div>
      {agent.appium && (
        // Started with --appium (API.md §12): which drivers, so a session's automationName can be chosen.
        <p className="text-sm text-muted">
          Appium {agent.appium.version}:{" "}
          {agent.appium.drivers
            .map((driver) =>
              driver.platform_names.length > 0
                ? `${driver.name} (${driver.platform_names.join(", ")})`
                : driver.name,
            )
            .join(", ") || "no drivers installed"}
        </p>
      )}
      {agent.devices.length === 0 ? (
        <p className="text-sm text-muted">No devices connected: it runs host steps only.</p>
      ) : (
        <AgentDevices agent={agent} />
      )}
    </li>
  );
}

/** The device hosts of the organization and their devices: who can take work now, and what they are running. */
export function AgentsPage() {
  const agents = useQuery(agentsQuery);
  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold">Agents</h1>
      {agents.error && <ProblemMessage error={agents.error} />}
      {agents.isPending && <p className="text-muted">Loading agents…</p>}
      {agents.data?.length === 0 && (
        <p className="text-muted">
          No agent has connected yet: start one with testbay-agent (see docs/devices-and-agents.md).
        </p>
      )}
      {agents.data && agents.data.length > 0 && (
        <ul className="grid gap-4 lg:grid-cols-2">
          {agents.data.map((agent) => (
            // An organization's own agent and a fleet agent may claim with the same id.
            <AgentCard key={`${agent.serves}:${agent.id}`} agent={agent} />
          ))}
        </ul>
      )}
    </section>
  );
}
