/**
 * `--simulator "DEVICE_TYPE@OS[=N]"` (API.md §13 "Managed devices"): which simulators the agent keeps, as the
 * operator typed them. Only the form is checked here; whether this Mac's Xcode has that device type and
 * runtime is simulator-catalog.ts's question, which needs simctl.
 */

export interface SimulatorSpec {
  /** As typed: a device type's name ("iPhone 15") or identifier ("com.apple.CoreSimulator.SimDeviceType.iPhone-15"). */
  deviceType: string;
  /** A runtime version ("17.4", or "17" for the newest 17.x) or a runtime identifier. */
  os: string;
  /** How many simulators of it (default 1). */
  count: number;
  /** The option's value, for messages. */
  given: string;
}

/** More would not boot side by side on one Mac anyway; a typo such as "=20" is more likely than intent. */
export const MAX_SIMULATORS_PER_SPEC = 16;

const form = /^(?<type>[^@]+)@(?<os>[^@=]+?)(?:=(?<count>[^=]*))?$/;
const version = /^(?:iOS ?)?(\d+(?:\.\d+)*)$/i;
const runtimeIdentifier = /^com\.apple\.CoreSimulator\.SimRuntime\.iOS-\d+(?:-\d+)*$/;

/** Parses one `--simulator` value; throws an Error whose message says what is wrong and shows the form. */
export function parseSimulatorSpec(given: string): SimulatorSpec {
  const example = 'e.g. --simulator "iPhone 15@17.4=2"';
  const m = form.exec(given.trim());
  if (!m?.groups) {
    throw new Error(`--simulator "${given}": expected DEVICE_TYPE@OS[=N], ${example}`);
  }
  const deviceType = (m.groups.type ?? "").trim();
  const osGiven = (m.groups.os ?? "").trim();
  if (deviceType === "") throw new Error(`--simulator "${given}": the device type is missing, ${example}`);
  const os = version.exec(osGiven)?.[1] ?? (runtimeIdentifier.test(osGiven) ? osGiven : null);
  if (os === null) {
    throw new Error(
      `--simulator "${given}": "${osGiven}" is not an iOS version (such as 17.4) or runtime identifier, ${example}`,
    );
  }
  let count = 1;
  if (m.groups.count !== undefined) {
    count = Number(m.groups.count);
    if (!/^\d+$/.test(m.groups.count) || count < 1 || count > MAX_SIMULATORS_PER_SPEC) {
      throw new Error(
        `--simulator "${given}": N must be a whole number from 1 to ${MAX_SIMULATORS_PER_SPEC}, ${example}`,
      );
    }
  }
  return { deviceType, os, count, given };
}
