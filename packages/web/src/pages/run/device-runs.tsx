import type { DeviceRun } from "../../api/types.ts";
import { StatusChip } from "../../components/status-chip.tsx";
import { SummaryCounts } from "../../components/summary-counts.tsx";
import { formatDuration, runDuration } from "../../format/duration.ts";
import { type DeviceEntry, deviceEntries, shardLabel } from "./shards.ts";

/** "Android · Pixel 8 · 14": what the plan asked for; null means the agent's own host (inspect, shell). */
function wanted(run: DeviceRun): string {
  if (!run.device) return "Agent host";
  return [run.device.platform, run.device.model, run.device.os_version].filter(Boolean).join(" · ");
}

/** The device it ran on, from what the agent reported (serial, model, OS version). */
function claimed(run: DeviceRun): string | undefined {
  const device = run.claimed_device;
  if (!device) return undefined;
  const parts = [device.model, device.os_version, device.serial].filter((part) => typeof part === "string");
  return parts.length > 0 ? parts.join(" · ") : undefined;
}

/** One device run: its device (or, within a sharded entry, its shard), state, attempt, counts and step notes. */
function DeviceRunCard({ run, title }: { run: DeviceRun; title: string }) {
  const took = runDuration(run.started_at, run.finished_at);
  const on = claimed(run);
  return (
    <li className="space-y-1 rounded-lg border border-line bg-surface p-3 text-sm">
      <div className="flex items-center justify-between gap-2">
        <span className="font-medium">{title}</span>
        <StatusChip status={run.status} />
      </div>
      {on && <div className="text-muted">on {on}</div>}
      <div className="text-muted">
        attempt {run.attempt}
        {run.agent_id && <> · agent {run.agent_id}</>}
        {took !== undefined && <> · {formatDuration(took)}</>}
      </div>
      {run.reason && <div className="text-muted">reason: {run.reason}</div>}
      {run.summary && <SummaryCounts summary={run.summary} />}
      {run.steps.some((step) => step.message) && (
        <ul className="mt-1 space-y-0.5 text-xs">
          {run.steps
            .filter((step) => step.message)
            .map((step) => (
              <li key={step.index}>
                <span className="font-medium">{step.name}</span>: {step.message}
              </li>
            ))}
        </ul>
      )}
    </li>
  );
}

const grid = "grid gap-3 sm:grid-cols-2 lg:grid-cols-3";

/** A sharded device entry: the device it asked for once, then a card per shard, each its own device run. */
function ShardedEntry({ entry }: { entry: DeviceEntry }) {
  const first = entry.runs[0] as DeviceRun;
  const headingId = `device-entry-${entry.position}`;
  const count = entry.runs.length;
  return (
    <section aria-labelledby={headingId} className="space-y-2">
      <h3 id={headingId} className="text-sm font-medium">
        {wanted(first)} <span className="font-normal text-muted">· {count} shards</span>
      </h3>
      <ul className={grid}>
        {entry.runs.map((run) => (
          <DeviceRunCard key={run.shard} run={run} title={shardLabel(run.shard, count) ?? wanted(run)} />
        ))}
      </ul>
    </section>
  );
}

/**
 * The run's device runs, grouped by the plan's device entry: an entry split into shards shows each shard's run
 * under the device it asked for; unsharded entries sit side by side as before.
 */
export function DeviceRuns({ devices }: { devices: DeviceRun[] }) {
  // Consecutive unsharded entries share one grid, a sharded entry gets a group of its own, in the plan's order.
  const parts: Array<DeviceEntry | DeviceEntry[]> = [];
  for (const entry of deviceEntries(devices)) {
    const last = parts.at(-1);
    if (entry.runs.length > 1) parts.push(entry);
    else if (Array.isArray(last)) last.push(entry);
    else parts.push([entry]);
  }
  return (
    <section aria-labelledby="device-runs" className="space-y-2">
      <h2 id="device-runs" className="text-lg font-semibold">
        Device runs
      </h2>
      <div className="space-y-4">
        {parts.map((part) =>
          Array.isArray(part) ? (
            <ul key={`plain-${part[0]?.position}`} className={grid}>
              {part.map((entry) => (
                <DeviceRunCard
                  key={entry.position}
                  run={entry.runs[0] as DeviceRun}
                  title={wanted(entry.runs[0] as DeviceRun)}
                />
              ))}
            </ul>
          ) : (
            <ShardedEntry key={part.position} entry={part} />
          ),
        )}
      </div>
    </section>
  );
}
