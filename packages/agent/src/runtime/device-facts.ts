/**
 * API.md §13 "What a device is": the facts a claim adds to each device beyond §7's serial, platform, model and
 * os_version. A server from before §13 validates device entries strictly and answers 400 to any of them; the
 * agent then stops sending them (agent.ts) rather than claim nothing at all.
 */
import { type AgentDevice, TestbayApiError } from "@testbay/client";
import type { ManagedDeviceState } from "../managed/managed-device-pool.ts";

export interface DeviceFacts {
  api_level: number | null;
  abi: string | null;
  /** Null: not known (an iOS device found by xcrun whose kind the agent was not told). */
  emulator: boolean | null;
  managed: boolean;
  pool: string | null;
  labels: Record<string, string>;
  state: ManagedDeviceState;
  error: string | null;
  /** A managed device's last boot, launch to ready (ms); null for others. */
  boot_ms: number | null;
}

/** The claim's device entry with the facts that are known (unknown ones are left out, not sent as null). */
export function withDeviceFacts(device: AgentDevice, facts: DeviceFacts): AgentDevice {
  const known = Object.fromEntries(Object.entries(facts).filter(([, value]) => value !== null));
  // The SDK's AgentDevice follows the server's schema of the day; these fields are §13's, optional there.
  return { ...device, ...known } as AgentDevice;
}

/** A claim refused for its content (400), while the agent sent §13's facts: the server predates them. */
export function deviceFactsRefused(error: unknown): boolean {
  return error instanceof TestbayApiError && error.status === 400;
}
