/**
 * Keeps the agent's picture of its Android devices current while it runs: each `refresh()` lists the
 * ready devices again and describes (getprop) only the ones that appeared since the last look, so a
 * device costs one getprop per appearance, not one per poll.
 */
import type { AdbDeviceEntry } from "./adb-devices.ts";
import type { FoundDevice, Listing } from "./discover-devices.ts";

export interface DeviceSource {
  list(): Promise<Listing>;
  describe(entry: AdbDeviceEntry): Promise<FoundDevice>;
}

/**
 * One appearance of a device: its serial and adb transport. A device unplugged and plugged back between
 * two looks keeps its serial but gets a new transport id, and an emulator port reused by another AVD is
 * the same case, so its properties are read again.
 */
export function appearanceKey(serial: string, transportId: string | null | undefined): string {
  return `${serial}\u0000${transportId ?? ""}`;
}

export interface DeviceDiff {
  added: string[];
  removed: string[];
}

/** Which keys appeared and which went, each in the order given. */
export function diffKeys(before: Iterable<string>, after: Iterable<string>): DeviceDiff {
  const was = new Set(before);
  const now = new Set(after);
  return {
    added: [...now].filter((key) => !was.has(key)),
    removed: [...was].filter((key) => !now.has(key)),
  };
}

export interface RefreshResult {
  added: FoundDevice[];
  removed: FoundDevice[];
  /** Why adb could not list devices this time (the previous set is kept), else null. */
  error: string | null;
}

export class DeviceTracker {
  private current = new Map<string, FoundDevice>();

  constructor(private readonly source: DeviceSource) {}

  /** The ready devices as of the last refresh, in the order adb listed them. */
  devices(): FoundDevice[] {
    return [...this.current.values()];
  }

  async refresh(): Promise<RefreshResult> {
    const listing = await this.source.list();
    // One failed `adb devices` (a restarting adb server, a slow host) says nothing about the devices:
    // dropping them all would end every claim for a blip.
    if (listing.entries === null) return { added: [], removed: [], error: listing.reason };
    const entries = new Map(
      listing.entries.map((entry) => [appearanceKey(entry.serial, entry.attributes.transport_id), entry]),
    );
    const diff = diffKeys(this.current.keys(), entries.keys());
    const added = await Promise.all(
      diff.added.map((key) => this.source.describe(entries.get(key) as AdbDeviceEntry)),
    );
    const removed = diff.removed.map((key) => this.current.get(key) as FoundDevice);
    const next = new Map<string, FoundDevice>();
    const described = new Map(diff.added.map((key, i) => [key, added[i] as FoundDevice]));
    for (const key of entries.keys()) {
      next.set(key, this.current.get(key) ?? (described.get(key) as FoundDevice));
    }
    this.current = next;
    return { added, removed, error: null };
  }
}
