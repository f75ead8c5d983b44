/**
 * A device as people read it in reports and lists: "Pixel 7, android 14 (emulator-5554)", from what the agent
 * said of the device it claimed (or what the plan asked for, before a claim); "agent host" for a device-less run.
 * The CTRF document (reports/ctrf-report.ts) and failure occurrences (failures/failures.service.ts) name devices so.
 */
export interface DeviceFacts {
  platform?: string | null;
  model?: string | null;
  os_version?: string | null;
  serial?: string | null;
}

export function deviceName({ model, platform, os_version, serial }: DeviceFacts): string {
  const os = [platform, os_version].filter(Boolean).join(" ");
  const named = [model, os].filter(Boolean).join(", ");
  return `${named || "agent host"}${serial ? ` (${serial})` : ""}`;
}

/** The facts of a device run's stored device (device_runs.claimed_device, else .device: JSON objects). */
export function deviceFactsOf(claimed: string | null, requested: string | null): DeviceFacts {
  const parsed = JSON.parse(claimed ?? requested ?? "null") as Record<string, unknown> | null;
  const text = (key: string) => (typeof parsed?.[key] === "string" ? (parsed[key] as string) : null);
  return {
    platform: text("platform"),
    model: text("model"),
    os_version: text("os_version"),
    serial: text("serial"),
  };
}
