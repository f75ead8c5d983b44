/**
 * The name Testbay gives the simulators it creates: "testbay iPhone 15 17.4 #2". A restarted agent finds its
 * simulators again by it (and reuses them instead of creating more each start); simulators named otherwise
 * are the operator's, which the agent never shuts down, erases or deletes.
 */
import type { ResolvedSimulatorSpec } from "./simulator-catalog.ts";

export function testbaySimulatorName(resolved: ResolvedSimulatorSpec, instance: number): string {
  return `testbay ${resolved.deviceType.name} ${resolved.runtime.version} #${instance}`;
}
