// The simctl stand-in as the managed simulators drive it (src/managed/simulators/): device types and runtimes
// listed with the keys of recorded output, `create` with its recorded refusals, the boot/shutdown/erase cycle
// with CoreSimulator's state errors, erase wiping what `install` put there, boots that fail on the lab's cue,
// and simulators deleted behind the agent's back.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AppleLab, createAppleLab, runXc, writeAppBundle } from "./apple-lab.ts";

let lab: AppleLab;
const dirs: string[] = [];
afterEach(() => {
  lab?.cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const xcrun = (...args: string[]) => runXc(lab, "xcrun", args);
const IPHONE_15 = "com.apple.CoreSimulator.SimDeviceType.iPhone-15";
const IOS_17_4 = "com.apple.CoreSimulator.SimRuntime.iOS-17-4";

/**
 * Keys of recorded `simctl list devicetypes -j` entries (Xcode 11 and later: bitrise-io/go-xcode
 * destination/testdata/testout.go) and `simctl list runtimes -j` entries (Xcode 15, iOS 17.0: the sample in
 * flutter/flutter packages/flutter_tools/lib/src/ios/simulators.dart), in the order simctl printed them.
 */
const RECORDED_DEVICE_TYPE_KEYS = [
  "productFamily",
  "bundlePath",
  "maxRuntimeVersion",
  "maxRuntimeVersionString",
  "identifier",
  "modelIdentifier",
  "minRuntimeVersionString",
  "minRuntimeVersion",
  "name",
];
const RECORDED_RUNTIME_KEYS = [
  "bundlePath",
  "buildversion",
  "platform",
  "runtimeRoot",
  "identifier",
  "version",
  "isInternal",
  "isAvailable",
  "name",
  "supportedDeviceTypes",
];
const RECORDED_SUPPORTED_TYPE_KEYS = ["bundlePath", "name", "identifier", "productFamily"];

async function create(...args: string[]): Promise<string> {
  const made = await xcrun("simctl", "create", ...args);
  expect(made.code, made.stderr).toBe(0);
  expect(made.stdout).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}\n$/);
  return made.stdout.trim();
}

describe("simctl list devicetypes and runtimes", () => {
  it("lists what the lab's Xcode can make, with the keys and layout of recorded output", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    const types = await xcrun("simctl", "list", "devicetypes", "-j");
    const typeDoc = JSON.parse(types.stdout);
    expect(Object.keys(typeDoc)).toEqual(["devicetypes"]);
    for (const t of typeDoc.devicetypes) expect(Object.keys(t)).toEqual(RECORDED_DEVICE_TYPE_KEYS);
    expect(typeDoc.devicetypes.find((t: { name: string }) => t.name === "iPhone 15")).toMatchObject({
      identifier: IPHONE_15,
      productFamily: "iPhone",
      minRuntimeVersionString: "17.0.0",
      minRuntimeVersion: 17 * 65536,
    });
    expect(types.stdout).toContain('"bundlePath" : "\\/Applications\\/Xcode.app\\/');

    const runtimes = JSON.parse((await xcrun("simctl", "list", "runtimes", "--json")).stdout);
    expect(Object.keys(runtimes)).toEqual(["runtimes"]);
    for (const r of runtimes.runtimes) {
      expect(Object.keys(r)).toEqual(RECORDED_RUNTIME_KEYS);
      for (const s of r.supportedDeviceTypes) expect(Object.keys(s)).toEqual(RECORDED_SUPPORTED_TYPE_KEYS);
    }
    expect(runtimes.runtimes[0]).toMatchObject({
      identifier: IOS_17_4,
      version: "17.4",
      name: "iOS 17.4",
      platform: "iOS",
      isAvailable: true,
    });

    const all = JSON.parse((await xcrun("simctl", "list", "-j")).stdout);
    expect(Object.keys(all)).toEqual(["devicetypes", "runtimes", "devices", "pairs"]);
    const text = (await xcrun("simctl", "list", "runtimes")).stdout;
    // The text form of a runtime as simctl names it in its errors (Kotlin/Storytale#80).
    expect(text.split("\n")).toContain(`iOS 17.4 (17.4 - 21E213) - ${IOS_17_4}`);
    expect((await xcrun("simctl", "list", "devicetypes")).stdout.split("\n")).toContain(
      `iPhone 15 (${IPHONE_15})`,
    );
  });

  it("offers only the runtimes and device types the lab was given, each runtime with the types it supports", async () => {
    lab = await createAppleLab({
      deviceTypes: [{ name: "iPhone 15", identifier: IPHONE_15 }],
      runtimes: [{ version: "17.4", buildversion: "21E213", supportedDeviceTypes: [IPHONE_15] }],
    });
    const runtimes = JSON.parse((await xcrun("simctl", "list", "runtimes", "-j")).stdout).runtimes;
    expect(runtimes.map((r: { identifier: string }) => r.identifier)).toEqual([IOS_17_4]);
    expect(runtimes[0].supportedDeviceTypes.map((t: { name: string }) => t.name)).toEqual(["iPhone 15"]);
  });
});

describe("simctl create", () => {
  it("prints the new UDID and adds a Shutdown simulator of that type under its runtime", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    const byName = await create("testbay iPhone 15 17.4 #1", "iPhone 15", IOS_17_4);
    const byIdentifier = await create("second", IPHONE_15, "iOS 17.4");
    const spokenTight = await create("third", IPHONE_15, "iOS17.5");
    const listed = JSON.parse((await xcrun("simctl", "list", "devices", "-j")).stdout).devices;
    expect(listed[IOS_17_4].map((s: { udid: string }) => s.udid)).toEqual([byName, byIdentifier]);
    expect(listed[IOS_17_4][0]).toMatchObject({
      name: "testbay iPhone 15 17.4 #1",
      state: "Shutdown",
      isAvailable: true,
      deviceTypeIdentifier: IPHONE_15,
    });
    expect(listed["com.apple.CoreSimulator.SimRuntime.iOS-17-5"][0].udid).toBe(spokenTight);
    // Without a runtime: the newest that supports the type.
    const newest = await create("newest", "iPhone 15");
    expect(lab.simulators().find((s) => s.udid === newest)?.runtime).toBe(
      "com.apple.CoreSimulator.SimRuntime.iOS-18-0",
    );
  });

  it("refuses an unknown device type or runtime, and a runtime that does not run that device type, as simctl does", async () => {
    lab = await createAppleLab({
      deviceTypes: [
        { name: "iPhone 15", identifier: IPHONE_15 },
        { name: "iPhone 16 Pro", identifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-16-Pro" },
      ],
      runtimes: [{ version: "17.4", buildversion: "21E213", supportedDeviceTypes: [IPHONE_15] }],
    });
    const type = await xcrun(
      "simctl",
      "create",
      "x",
      "com.apple.CoreSimulator.SimDeviceType.iPhone-5",
      IOS_17_4,
    );
    expect([type.code, type.stdout, type.stderr]).toEqual([
      146,
      "",
      "Invalid device type: com.apple.CoreSimulator.SimDeviceType.iPhone-5\n",
    ]);
    const runtime = await xcrun(
      "simctl",
      "create",
      "x",
      "iPhone 15",
      "com.apple.CoreSimulator.SimRuntime.iOS-17-5",
    );
    expect([runtime.code, runtime.stderr]).toEqual([
      146,
      "Invalid runtime: com.apple.CoreSimulator.SimRuntime.iOS-17-5\n",
    ]);
    const pair = await xcrun("simctl", "create", "x", "iPhone 16 Pro", IOS_17_4);
    expect(pair.code).toBe(403 & 0xff);
    expect(pair.stderr).toBe(
      "Unable to create a device for device type: iPhone 16 Pro (com.apple.CoreSimulator.SimDeviceType.iPhone-16-Pro), " +
        `runtime: iOS 17.4 (17.4 - 21E213) - ${IOS_17_4}\n` +
        "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=403):\n",
    );
    const usage = await xcrun("simctl", "create", "x");
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain("Usage: simctl create <name> <device type id> [<runtime id>]");
    expect(lab.simulators()).toEqual([]);
  });
});

describe("a created simulator's life", () => {
  it("boots, refuses to erase while Booted, and after shutdown and erase has lost everything installed", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    const udid = await create("sim", "iPhone 15", IOS_17_4);
    const dir = mkdtempSync(join(tmpdir(), "testbay-simctl-life-"));
    dirs.push(dir);
    const shop = writeAppBundle(dir, { bundleId: "com.example.shop", name: "Shop" });
    const notes = writeAppBundle(dir, { bundleId: "com.example.notes", name: "Notes" });

    expect((await xcrun("simctl", "boot", udid)).code).toBe(0);
    const ready = await xcrun("simctl", "bootstatus", udid, "-b");
    expect(ready.code).toBe(0);
    expect(ready.stdout).toMatch(/Finished\n|Device already booted, nothing to do\.\n/);
    expect((await xcrun("simctl", "install", udid, shop)).code).toBe(0);
    expect((await xcrun("simctl", "install", udid, notes)).code).toBe(0);

    const erasing = await xcrun("simctl", "erase", udid);
    expect([erasing.code, erasing.stderr]).toEqual([
      149,
      "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\n" +
        "Unable to erase contents and settings in current state: Booted\n",
    ]);
    expect(Object.keys(lab.installed(udid)).sort()).toEqual(["com.example.notes", "com.example.shop"]);

    expect((await xcrun("simctl", "shutdown", udid)).code).toBe(0);
    expect((await xcrun("simctl", "erase", udid)).code).toBe(0);
    expect(lab.installed(udid)).toEqual({});
    expect((await xcrun("simctl", "bootstatus", udid, "-b")).code).toBe(0);
    expect((await xcrun("simctl", "install", udid, shop)).code).toBe(0);
    expect(lab.installs(udid).map((i) => i.alreadyInstalled)).toEqual([[], ["com.example.shop"], []]);
    expect(lab.simulators()[0]).toMatchObject({ state: "Booted", erased: 1 });
  });

  it("fails to boot on the lab's cue with simctl's recorded launchd failure, and stays Shutdown", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    const udid = await create("sim", "iPhone 15", IOS_17_4);
    lab.failBoot(udid, 2);
    const boot = await xcrun("simctl", "boot", udid);
    expect(boot.code).toBe(60);
    expect(boot.stderr.split("\n").slice(0, 3)).toEqual([
      "An error was encountered processing the command (domain=NSPOSIXErrorDomain, code=60):",
      "Unable to boot the Simulator.",
      "launchd failed to respond.",
    ]);
    expect(boot.stderr).toContain("Failed to start launchd_sim: could not bind to session");
    expect(lab.simulators()[0]?.state).toBe("Shutdown");
    expect((await xcrun("simctl", "bootstatus", udid, "-b")).code).toBe(60);
    expect((await xcrun("simctl", "boot", udid)).code).toBe(0);
    expect(lab.simulators()[0]).toMatchObject({ state: "Booted", failedBoots: 2 });
  });

  it("makes simulators created under a name fail every boot (lab.onCreate)", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    lab.onCreate("broken", { bootFailures: -1 });
    const broken = await create("broken", "iPhone 15", IOS_17_4);
    const fine = await create("fine", "iPhone 15", IOS_17_4);
    for (let i = 0; i < 3; i++) expect((await xcrun("simctl", "boot", broken)).code).toBe(60);
    expect((await xcrun("simctl", "boot", fine)).code).toBe(0);
    expect(lab.simulators().map((s) => [s.name, s.state, s.failedBoots ?? 0])).toEqual([
      ["broken", "Shutdown", 3],
      ["fine", "Booted", 0],
    ]);
  });

  it("forgets a deleted simulator: not listed, and every command on it is an invalid device", async () => {
    lab = await createAppleLab({ timeScale: 0.01 });
    const deleted = await create("a", "iPhone 15", IOS_17_4);
    const vanished = await create("b", "iPhone 15", IOS_17_4);
    await xcrun("simctl", "boot", vanished);
    expect((await xcrun("simctl", "delete", deleted)).code).toBe(0);
    lab.vanish(vanished);
    expect(JSON.parse((await xcrun("simctl", "list", "devices", "-j")).stdout).devices[IOS_17_4]).toEqual([]);
    const boot = await xcrun("simctl", "boot", vanished);
    expect([boot.code, boot.stderr]).toEqual([148, `Invalid device: ${vanished}\n`]);
    expect(lab.simulators()).toEqual([]);
  });
});
