/**
 * Keeps the agent's picture of its devices current while it runs: each `refresh()` lists the ready devices
 * again and describes (getprop) only the ones that appeared since the last look, so a device costs one
 * getprop per appearance, not one per poll. Platform by platform: a platform whose tool failed this time
 * keeps its last known devices while the others follow what their tools listed.
 */
import type { AdbDeviceEntry } from "./adb-devices.ts";
import {
  type FoundDevice,
  type Listing,
  PLATFORMS,
  type Platform,
  type Unlisted,
  unlistedPlatforms,
} from "./discover-devices.ts";

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
  /**
   * The platforms not listed this time, and why: a `failed` one kept its last known devices (neither
   * removed nor described again), a `no-tool` one has none.
   */
  unlisted: Unlisted[];
}

export class DeviceTracker {
  private current = new Map<Platform, Map<string, FoundDevice>>();

  constructor(private readonly source: DeviceSource) {}

  /** The ready devices as of the last refresh: Android's in the order adb listed them, then iOS's. */
  devices(): FoundDevice[] {
    return PLATFORMS.flatMap((platform) => [...(this.current.get(platform)?.values() ?? [])]);
  }

  async refresh(): Promise<RefreshResult> {
    const listing = await this.source.list();
    const unlisted = unlistedPlatforms(listing);
    const listed = new Map<Platform, Map<string, AdbDeviceEntry>>();
    for (const platform of PLATFORMS) {
      const said = listing[platform];
      // One failed `adb devices` (a restarting adb server, a slow host) says nothing about the devices:
      // dropping them would end every claim for a blip. Its platform stays as it was.
      if (said.outcome === "failed") continue;
      const entries = said.outcome === "listed" ? said.entries : [];
      listed.set(
        platform,
        new Map(entries.map((entry) => [appearanceKey(entry.serial, entry.attributes.transport_id), entry])),
      );
    }
    const appeared: AdbDeviceEntry[] = [];
    const removed: FoundDevice[] = [];
    for (const [platform, entries] of listed) {
      const known = this.current.get(platform) ?? new Map<string, FoundDevice>();
      const diff = diffKeys(known.keys(), entries.keys());
      for (const key of diff.added) appeared.push(entries.get(key) as AdbDeviceEntry);
      for (const key of diff.removed) removed.push(known.get(key) as FoundDevice);
    }
    const added = await Promise.all(appeared.map((entry) => this.source.describe(entry)));
    const described = new Map(appeared.map((entry, i) => [entry, added[i] as FoundDevice]));
    for (const [platform, entries] of listed) {
      const known = this.current.get(platform) ?? new Map<string, FoundDevice>();
      const next = new Map<string, FoundDevice>();
      for (const [key, entry] of entries)
        next.set(key, known.get(key) ?? (described.get(entry) as FoundDevice));
      this.current.set(platform, next);
    }
    return { added, removed, unlisted };
  }
}
