import { describe, expect, it } from "vitest";
import type { AdbDeviceEntry } from "./adb-devices.ts";
import { appearanceKey, type DeviceSource, DeviceTracker, diffKeys } from "./device-tracker.ts";
import type { FoundDevice, Listing, Platform } from "./discover-devices.ts";

describe("diffKeys", () => {
  it("names what appeared and what went, in order", () => {
    expect(diffKeys(["a", "b", "c"], ["b", "d", "c", "e"])).toEqual({ added: ["d", "e"], removed: ["a"] });
  });

  it("finds no change between equal sets in another order, nor between two empty ones", () => {
    expect(diffKeys(["a", "b"], ["b", "a"])).toEqual({ added: [], removed: [] });
    expect(diffKeys([], [])).toEqual({ added: [], removed: [] });
  });

  it("tells a replugged device (new transport) from the one before it", () => {
    expect(diffKeys([appearanceKey("emulator-5554", "1")], [appearanceKey("emulator-5554", "4")])).toEqual({
      added: [appearanceKey("emulator-5554", "4")],
      removed: [appearanceKey("emulator-5554", "1")],
    });
  });
});

/** A host whose adb and xcrun answer from lists the test changes; counts describe (getprop) calls per serial. */
function fakeHost() {
  const listing: Listing = {
    android: { outcome: "listed", entries: [] },
    ios: { outcome: "listed", entries: [] },
  };
  const described: string[] = [];
  const source: DeviceSource = {
    list: async () => ({ ...listing }),
    describe: async (entry: AdbDeviceEntry): Promise<FoundDevice> => {
      described.push(entry.serial);
      const ios = entry.attributes.ios === "1";
      return {
        serial: entry.serial,
        platform: ios ? "ios" : "android",
        model: `model of ${entry.serial}`,
        os_version: ios ? "17.5" : "14",
        modelFrom: ios ? "xcrun" : "getprop",
        transportId: entry.attributes.transport_id ?? null,
      };
    },
  };
  return {
    source,
    described,
    attach(...devices: [serial: string, transport: string][]) {
      listing.android = {
        outcome: "listed",
        entries: devices.map(([serial, transport]) => ({
          serial,
          state: "device",
          attributes: { transport_id: transport },
        })),
      };
    },
    simulators(...udids: string[]) {
      listing.ios = {
        outcome: "listed",
        entries: udids.map((serial) => ({ serial, state: "device", attributes: { ios: "1" } })),
      };
    },
    failWith(platform: Platform, reason: string) {
      listing[platform] = { outcome: "failed", reason };
    },
    noTool(platform: Platform, reason: string) {
      listing[platform] = { outcome: "no-tool", reason };
    },
  };
}

const serials = (devices: FoundDevice[]) => devices.map((d) => d.serial);

describe("DeviceTracker", () => {
  it("reads a device's properties once per appearance, not once per look", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.attach(["A", "1"]);
    expect((await tracker.refresh()).added.map((d) => d.serial)).toEqual(["A"]);
    await tracker.refresh();
    await tracker.refresh();
    host.attach(["A", "1"], ["B", "2"]);
    const change = await tracker.refresh();
    expect(change.added.map((d) => d.serial)).toEqual(["B"]);
    expect(change.removed).toEqual([]);
    expect(host.described).toEqual(["A", "B"]);
    expect(tracker.devices().map((d) => d.serial)).toEqual(["A", "B"]);
  });

  it("drops a device that went and reads it again when it comes back", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.attach(["A", "1"], ["B", "2"]);
    await tracker.refresh();
    host.attach(["B", "2"]);
    const gone = await tracker.refresh();
    expect(gone).toMatchObject({ added: [], unlisted: [] });
    expect(gone.removed.map((d) => [d.serial, d.model])).toEqual([["A", "model of A"]]);
    expect(tracker.devices().map((d) => d.serial)).toEqual(["B"]);
    host.attach(["B", "2"], ["A", "3"]);
    expect((await tracker.refresh()).added.map((d) => [d.serial, d.transportId])).toEqual([["A", "3"]]);
    expect(host.described).toEqual(["A", "B", "A"]);
  });

  it("keeps the devices it knows when adb cannot list them for a moment", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.attach(["A", "1"]);
    await tracker.refresh();
    host.failWith("android", "adb devices -l failed: no answer within 10 s");
    expect(await tracker.refresh()).toEqual({
      added: [],
      removed: [],
      unlisted: [
        { platform: "android", outcome: "failed", reason: "adb devices -l failed: no answer within 10 s" },
      ],
    });
    expect(serials(tracker.devices())).toEqual(["A"]);
    expect(host.described).toEqual(["A"]);
  });

  it("offers the simulators from the first look on when adb fails from the start", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.failWith(
      "android",
      "adb devices -l failed: adb: failed to check server version: cannot connect to daemon",
    );
    host.simulators("SIM-1", "SIM-2");
    const first = await tracker.refresh();
    expect(serials(first.added)).toEqual(["SIM-1", "SIM-2"]);
    expect(first.unlisted.map((u) => [u.platform, u.outcome])).toEqual([["android", "failed"]]);
    expect(serials(tracker.devices())).toEqual(["SIM-1", "SIM-2"]);
  });

  it("follows the iOS devices while adb fails, keeping the Android device it had, undescribed again", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.attach(["A", "1"]);
    host.simulators("SIM-1");
    await tracker.refresh();
    host.failWith(
      "android",
      "adb devices -l failed: adb: failed to check server version: cannot connect to daemon",
    );
    host.simulators("SIM-2");
    const change = await tracker.refresh();
    expect(serials(change.added)).toEqual(["SIM-2"]);
    expect(serials(change.removed)).toEqual(["SIM-1"]);
    expect(change.unlisted.map((u) => u.platform)).toEqual(["android"]);
    expect(serials(tracker.devices())).toEqual(["A", "SIM-2"]);
    // adb back: the device it lists is the one kept, not a new appearance.
    host.attach(["A", "1"]);
    expect(await tracker.refresh()).toEqual({ added: [], removed: [], unlisted: [] });
    expect(host.described).toEqual(["A", "SIM-1", "SIM-2"]);
  });

  it("follows the Android devices while simctl fails, keeping the simulators", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.attach(["A", "1"]);
    host.simulators("SIM-1");
    await tracker.refresh();
    host.failWith("ios", "xcrun simctl list devices failed: Unable to locate device set");
    host.attach(["A", "1"], ["B", "2"]);
    const change = await tracker.refresh();
    expect(serials(change.added)).toEqual(["B"]);
    expect(change.removed).toEqual([]);
    expect(change.unlisted.map((u) => u.platform)).toEqual(["ios"]);
    expect(serials(tracker.devices())).toEqual(["A", "B", "SIM-1"]);
  });

  it("keeps everything when both tools fail, with both reasons", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.attach(["A", "1"]);
    host.simulators("SIM-1");
    await tracker.refresh();
    host.failWith("android", "adb devices -l failed: no answer within 10 s");
    host.failWith("ios", "xcrun simctl list devices failed: Unable to locate device set");
    expect(await tracker.refresh()).toEqual({
      added: [],
      removed: [],
      unlisted: [
        { platform: "android", outcome: "failed", reason: "adb devices -l failed: no answer within 10 s" },
        {
          platform: "ios",
          outcome: "failed",
          reason: "xcrun simctl list devices failed: Unable to locate device set",
        },
      ],
    });
    expect(serials(tracker.devices())).toEqual(["A", "SIM-1"]);
  });

  it("has no devices of a platform whose tool is gone, and says why", async () => {
    const host = fakeHost();
    const tracker = new DeviceTracker(host.source);
    host.attach(["A", "1"]);
    host.simulators("SIM-1");
    await tracker.refresh();
    host.noTool("android", "adb is not on PATH");
    const change = await tracker.refresh();
    expect(serials(change.removed)).toEqual(["A"]);
    expect(change.unlisted).toEqual([
      { platform: "android", outcome: "no-tool", reason: "adb is not on PATH" },
    ]);
    expect(serials(tracker.devices())).toEqual(["SIM-1"]);
  });
});
