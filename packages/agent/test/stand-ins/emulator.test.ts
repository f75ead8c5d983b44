import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab } from "./device-lab.ts";
import { run, start, until } from "./run.ts";

// The emulator stand-in (bin/emulator, bin/avdmanager) and what the adb stand-in does with its instances.
const APP = join(
  fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url)),
  "app-basic.apk",
);
const AVD = "Pixel_7_API_34";

let lab: DeviceLab;
afterEach(() => lab?.cleanup());

async function newLab(bootMs = 2000) {
  lab = await createDeviceLab({ avds: [{ name: AVD, bootMs, snapshotLoadMs: 400 }], timeScale: 0.05 });
  return lab;
}

function boot(port: number, ...flags: string[]) {
  return start(lab, "emulator", [
    "-avd",
    AVD,
    "-port",
    String(port),
    "-no-window",
    "-no-audio",
    "-no-boot-anim",
    ...flags,
  ]);
}

async function booted(serial: string) {
  expect((await run(lab, "adb", ["-s", serial, "wait-for-device"])).code).toBe(0);
  await until(
    async () =>
      (await run(lab, "adb", ["-s", serial, "shell", "getprop", "sys.boot_completed"])).stdout.trim() === "1",
    `${serial} to boot`,
  );
}

async function stopped(instance: ReturnType<typeof boot>) {
  instance.child.kill("SIGTERM");
  return instance.done;
}

describe("emulator stand-in", () => {
  it("boots an instance that adb lists offline, then as a device, with sys.boot_completed 1 at the end", async () => {
    // An 8 s boot at this scale: adb answers offline for its first 2 s, long enough for `adb devices` to be asked
    // in that window on a loaded machine (a 2 s boot's half second was missed one run in five).
    await newLab(160_000);
    const emulator = boot(5554);
    await until(() => lab.emulators().length === 1, "the instance to appear");
    const listed = await run(lab, "adb", ["devices"]);
    expect(listed.stdout).toMatch(/emulator-5554\s+offline/);
    await booted("emulator-5554");
    expect((await run(lab, "adb", ["devices"])).stdout).toMatch(/emulator-5554\s+device/);
    expect(
      (await run(lab, "adb", ["-s", "emulator-5554", "shell", "getprop", "ro.boot.qemu.avd_name"])).stdout,
    ).toBe(`${AVD}\n`);
    expect((await run(lab, "adb", ["-s", "emulator-5554", "emu", "avd", "name"])).stdout).toBe(
      `${AVD}\nOK\n`,
    );
    expect(emulator.stdout()).toMatch(/Boot completed in \d+ ms/);
    const ended = await stopped(emulator);
    expect(ended.code).toBe(0);
    expect((await run(lab, "adb", ["devices"])).stdout).not.toContain("emulator-5554");
  });

  it("refuses an unknown AVD, and a second instance of a running AVD without -read-only, with the real texts", async () => {
    await newLab();
    const unknown = await run(lab, "emulator", ["-avd", "Nope", "-port", "5556"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      "emulator: ERROR: Unknown AVD name [Nope], use -list-avds to see valid list.",
    );
    const first = boot(5554);
    await until(() => lab.emulators().length === 1, "the first instance");
    const second = await boot(5556).done;
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("Running multiple emulators with the same AVD");
    expect(second.stderr).toContain("Please use -read-only flag to enable this feature.");
    await stopped(first);
    const a = boot(5554, "-read-only");
    const b = boot(5556, "-read-only");
    await Promise.all([booted("emulator-5554"), booted("emulator-5556")]);
    expect(
      lab
        .emulators()
        .map((e) => e.serial)
        .sort(),
    ).toEqual(["emulator-5554", "emulator-5556"]);
    await Promise.all([stopped(a), stopped(b)]);
  });

  it("keeps what was installed until a snapshot load puts the saved state back; -wipe-data starts empty", async () => {
    await newLab();
    const writable = boot(5554);
    await booted("emulator-5554");
    const save = await run(lab, "adb", [
      "-s",
      "emulator-5554",
      "emu",
      "avd",
      "snapshot",
      "save",
      "testbay-clean",
    ]);
    expect(save.stdout).toBe("OK\n");
    expect(Object.keys(lab.snapshots(AVD))).toEqual(["testbay-clean"]);
    expect((await run(lab, "adb", ["-s", "emulator-5554", "install", APP])).code).toBe(0);
    expect(Object.keys(lab.installed("emulator-5554"))).toEqual(["com.example.basic"]);
    const load = await run(lab, "adb", [
      "-s",
      "emulator-5554",
      "emu",
      "avd",
      "snapshot",
      "load",
      "testbay-clean",
    ]);
    expect(load.stdout).toBe("OK\n");
    expect(lab.installed("emulator-5554")).toEqual({});
    // What a writable instance had at exit is there at its next start (its quick-boot state).
    expect((await run(lab, "adb", ["-s", "emulator-5554", "install", APP])).code).toBe(0);
    await stopped(writable);
    const again = boot(5554);
    await booted("emulator-5554");
    expect(Object.keys(lab.installed("emulator-5554"))).toEqual(["com.example.basic"]);
    await stopped(again);
    const fromSnapshot = boot(5554, "-snapshot", "testbay-clean", "-read-only");
    await booted("emulator-5554");
    expect(lab.installed("emulator-5554")).toEqual({});
    await stopped(fromSnapshot);
    const wiped = boot(5554, "-wipe-data");
    await booted("emulator-5554");
    expect(lab.installed("emulator-5554")).toEqual({});
    await stopped(wiped);
  });

  it("a -read-only instance refuses snapshot commands with KO and forgets what was installed when it stops", async () => {
    await newLab();
    const readOnly = boot(5554, "-read-only");
    await booted("emulator-5554");
    for (const verb of ["save", "load"]) {
      const said = await run(lab, "adb", [
        "-s",
        "emulator-5554",
        "emu",
        "avd",
        "snapshot",
        verb,
        "testbay-clean",
      ]);
      expect(said.code).toBe(0);
      expect(said.stdout).toMatch(/^KO: .*read-only/);
    }
    expect(lab.snapshots(AVD)).toEqual({});
    expect((await run(lab, "adb", ["-s", "emulator-5554", "install", APP])).code).toBe(0);
    await stopped(readOnly);
    const next = boot(5554);
    await booted("emulator-5554");
    expect(lab.installed("emulator-5554")).toEqual({});
    await stopped(next);
  });

  it("adb emu kill stops the instance; a crash on cue takes it and its device away", async () => {
    await newLab();
    const killed = boot(5554);
    await booted("emulator-5554");
    expect((await run(lab, "adb", ["-s", "emulator-5554", "emu", "kill"])).stdout).toContain(
      "OK: killing emulator",
    );
    expect((await killed.done).code).toBe(0);
    const crashing = boot(5554);
    await booted("emulator-5554");
    lab.crashEmulator("emulator-5554");
    const crashed = await crashing.done;
    expect(crashed.code).toBe(139);
    const shell = await run(lab, "adb", ["-s", "emulator-5554", "shell", "getprop"]);
    expect(shell.stderr).toBe("adb: device 'emulator-5554' not found\n");
    expect(lab.emulators()).toEqual([]);
  });

  it("fails to boot on cue: exit with the recorded fatal line, or hang offline until killed", async () => {
    await newLab();
    lab.failBoots(AVD, 1, "exit");
    const failed = await boot(5554).done;
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      `A snapshot operation for '${AVD}' is pending and timeout has expired. Exiting...`,
    );
    lab.failBoots(AVD, 1, "hang");
    const hanging = boot(5554);
    await until(() => lab.emulators().length === 1, "the hanging instance");
    const state = await run(lab, "adb", ["-s", "emulator-5554", "shell", "getprop", "sys.boot_completed"]);
    expect(state.stderr).toBe("adb: device offline\n");
    await stopped(hanging);
    expect(lab.emulators()).toEqual([]);
    // The count is spent: the next launch boots.
    const fine = boot(5554);
    await booted("emulator-5554");
    await stopped(fine);
  });

  it("avdmanager list avd and emulator -list-avds name the lab's AVDs", async () => {
    await newLab();
    const listed = await run(lab, "avdmanager", ["list", "avd"]);
    expect(listed.stdout).toMatch(
      /^Available Android Virtual Devices:\n {4}Name: Pixel_7_API_34\n {2}Device: pixel_7 \(Google\)\n/,
    );
    expect(listed.stdout).toContain("Tag/ABI: google_apis/x86_64");
    expect((await run(lab, "emulator", ["-list-avds"])).stdout).toBe(`${AVD}\n`);
  });
});
