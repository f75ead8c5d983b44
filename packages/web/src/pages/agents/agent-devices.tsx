import type { Agent } from "../../api/types.ts";
import { InlineColumnHeaders } from "../../components/inline-column-headers.tsx";
import { formatDuration } from "../../format/duration.ts";

type Device = Agent["devices"][number];

/** A state's colour: green can take a run, blue runs one, amber will soon, orange and red need someone. */
const stateTones: Record<Device["state"], string> = {
  idle: "text-emerald-700 dark:text-emerald-400",
  busy: "text-sky-700 dark:text-sky-400",
  booting: "text-amber-700 dark:text-amber-400",
  resetting: "text-amber-700 dark:text-amber-400",
  drained: "text-orange-700 dark:text-orange-400",
  failed: "text-red-700 dark:text-red-400",
};

/** What kind of device it is, as far as its agent said: "managed emulator", "physical device" (nothing said: nothing). */
function kindOf(device: Device): string | null {
  if (device.emulator === undefined && device.managed === undefined) return null;
  const kind = device.emulator ? (device.platform === "ios" ? "simulator" : "emulator") : "physical device";
  return device.managed ? `managed ${kind}` : kind;
}

/** The OS line's details: the API level and ABI an Android agent read (API.md §13). */
function buildOf(device: Device): string {
  return [device.api_level == null ? null : `API ${device.api_level}`, device.abi ?? null]
    .filter((part) => part !== null)
    .join(" · ");
}

/**
 * An agent's devices, one row each: the model with its serial, pool, kind and labels under it; the OS with its API
 * level and ABI; the state, with how long a managed device's last boot took and the agent's reason under a failed
 * or drained one (API.md §13). Three columns, so a
 * phone shows them without scrolling sideways; facts an older agent does not send are simply not shown.
 */
export function AgentDevices({ agent }: { agent: Agent }) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-sm">
        <caption className="sr-only">Devices of {agent.name}</caption>
        <thead className="text-left text-muted">
          <tr>
            <InlineColumnHeaders names={["Device", "OS", "State"]} padding="py-1" />
          </tr>
        </thead>
        <tbody>
          {agent.devices.map((device) => {
            const kind = kindOf(device);
            const build = buildOf(device);
            const labels = Object.entries(device.labels ?? {});
            const reason =
              (device.state === "failed" || device.state === "drained") && device.error ? device.error : null;
            return (
              <tr key={device.serial} className="border-t border-line align-top">
                <td className="py-1 pr-3">
                  <div>{device.model}</div>
                  <div className="flex flex-wrap items-center gap-x-2 gap-y-0.5 text-xs text-muted">
                    <code className="break-all" title="Serial">
                      {device.serial}
                    </code>
                    {device.pool && <span title="Pool: the AVD or device type">{device.pool}</span>}
                    {kind && <span>{kind}</span>}
                    {labels.map(([key, value]) => (
                      <span
                        key={key}
                        title="Label (--label)"
                        className="rounded bg-zinc-100 px-1 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300"
                      >
                        {key}={value}
                      </span>
                    ))}
                  </div>
                </td>
                <td className="py-1 pr-3 whitespace-nowrap">
                  <div>
                    {device.platform} {device.os_version}
                  </div>
                  {build && <div className="text-xs text-muted">{build}</div>}
                </td>
                <td className="py-1">
                  <div className={`font-medium ${stateTones[device.state]}`}>{device.state}</div>
                  {device.boot_ms != null && (
                    <div className="text-xs text-muted" title="How long its last boot took, launch to ready">
                      booted in <span className="whitespace-nowrap">{formatDuration(device.boot_ms)}</span>
                    </div>
                  )}
                  {reason && (
                    <div
                      className="line-clamp-2 max-w-56 text-xs break-words whitespace-pre-line text-muted"
                      title={reason}
                    >
                      {reason}
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
