/**
 * Parses `adb devices -l`: a header, then one line per device, "SERIAL  STATE key:value…". The state is
 * one word (device, offline, unauthorized, recovery, sideload, bootloader…) except "no permissions (…);
 * see [url]", so the attributes are read from the end of the line.
 */

export interface AdbDeviceEntry {
  serial: string;
  /** As adb prints it; only "device" means ready for commands. */
  state: string;
  /** product, model, device, transport_id, usb… as printed (adb writes spaces in models as "_"). */
  attributes: Record<string, string>;
}

const HEADER = "List of devices attached";
const ATTRIBUTE = /^([a-z_]+):(\S*)$/;

export function parseAdbDevices(output: string): AdbDeviceEntry[] {
  const entries: AdbDeviceEntry[] = [];
  for (const raw of output.split("\n")) {
    const line = raw.trim();
    // "* daemon not running; starting now at tcp:5037" and similar chatter start with "*".
    if (line === "" || line.startsWith(HEADER) || line.startsWith("*")) continue;
    const [serial, ...rest] = line.split(/\s+/);
    if (serial === undefined || rest.length === 0) continue;
    const attributes: Record<string, string> = {};
    while (rest.length > 1) {
      const match = ATTRIBUTE.exec(rest[rest.length - 1] ?? "");
      if (match === null) break;
      attributes[match[1] as string] = match[2] as string;
      rest.pop();
    }
    entries.push({ serial, state: rest.join(" "), attributes });
  }
  return entries;
}

/** The entries adb can run commands on. */
export function usableDevices(entries: readonly AdbDeviceEntry[]): AdbDeviceEntry[] {
  return entries.filter((entry) => entry.state === "device");
}
