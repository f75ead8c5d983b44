import { describe, expect, it } from "vitest";
import type { AdbDeviceEntry } from "./adb-devices.ts";
import { appearanceKey, type DeviceSource, DeviceTracker, diffKeys } from "./device-tracker.ts";
import type { FoundDevice, Listing } from "./discover-devices.ts";

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

/** A host whose adb answers from a list the test changes; counts getprop calls per serial. */
function fakeHost() {
  let listing: Listing = { entries: [], reason: null };
  const described: string[] = [];
  const source: DeviceSource = {
    list: async () => listing,
    describe: async (entry: AdbDeviceEntry): Promise<FoundDevice> => {
      described.push(entry.serial);
      return {
        serial: entry.serial,
        platform: "android",
        model: `model of ${entry.serial}`,
        os_version: "14",
        modelFrom: "getprop",
        transportId: entry.attributes.transport_id ?? null,
      };
    },
  };
  return {
    source,
    described,
    attach(...devices: [serial: string, transport: string][]) {
      listing = {
        entries: devices.map(([serial, transport]) => ({
          serial,
          state: "device",
          attributes: { transport_id: transport },
        })),
        reason: null,
      };
    },
    failWith(reason: string) {
      listing = { entries: null, reason };
    },
  };
}

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
    expect(gone).toMatchObject({ added: [], error: null });
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
    host.failWith("adb devices failed: Command failed: adb devices -l");
    expect(await tracker.refresh()).toEqual({
      added: [],
      removed: [],
      error: "adb devices failed: Command failed: adb devices -l",
    });
    expect(tracker.devices().map((d) => d.serial)).toEqual(["A"]);
  });
});
