/** Managed iOS simulators (`--simulator "DEVICE_TYPE@OS[=N]"`, API.md §13): the pool and its option's parser. */
export { ManagedSimulators, type ManagedSimulatorsOptions } from "./managed-simulators.ts";
export { parseSimulatorSpec, type SimulatorSpec } from "./simulator-spec.ts";
