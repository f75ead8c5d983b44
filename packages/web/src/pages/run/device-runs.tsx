import type { DeviceRun } from "../../api/types.ts";
import { StatusChip } from "../../components/status-chip.tsx";
import { SummaryCounts } from "../../components/summary-counts.tsx";
import { formatDuration, runDuration } from "../../format/duration.ts";

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

export function DeviceRuns({ devices }: { devices: DeviceRun[] }) {
  return (
    <section aria-labelledby="device-runs" className="space-y-2">
      <h2 id="device-runs" className="text-lg font-semibold">
        Device runs
      </h2>
      <ul className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
        {devices.map((run, index) => {
          const took = runDuration(run.started_at, run.finished_at);
          const on = claimed(run);
          return (
            // Device runs have no id of their own: their position in the plan is theirs.
            // biome-ignore lint/suspicious/noArrayIndexKey: the position is the device run's identity
            <li key={index} className="space-y-1 rounded-lg border border-line bg-surface p-3 text-sm">
              <div className="flex items-center justify-between gap-2">
                <span className="font-medium">{wanted(run)}</span>
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
        })}
      </ul>
    </section>
  );
}
