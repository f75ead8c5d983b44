// The emulator stand-in's share of the device lab (FAKE_ADB_STATE): the AVDs the lab was made with, what each
// AVD keeps on disk (its userdata and its named snapshots), and the running instances, which are ordinary adb
// devices named emulator-PORT in devices.json. Several emulator processes boot at once and each changes
// devices.json, so every change to that file holds a lock (a directory made atomically) around its
// read-modify-write.
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { allDevices, paths, readJson, stateDir, writeJson } from "./state.mjs";

export const avdPaths = {
  avds: () => join(stateDir(), "avds.json"),
  avd: (name) => join(stateDir(), "avd", encodeURIComponent(name)),
  /** What a writable instance leaves behind on exit (the quick-boot state): the next cold start begins here. */
  userdata: (name) => join(avdPaths.avd(name), "userdata"),
  snapshot: (name, snapshot) => join(avdPaths.avd(name), "snapshots", encodeURIComponent(snapshot)),
  /** Boots that must fail from now on: { count, mode } (lab.failBoots). */
  failBoots: (name) => join(avdPaths.avd(name), "fail-boots.json"),
  /** Written by lab.crashEmulator(serial): the instance on that port dies at its next look. */
  crashRequest: (serial) => join(stateDir(), "crash-requests", encodeURIComponent(serial)),
  /** One line per emulator launch: { avd, port, pid, argv, at }, and one per exit: { port, pid, exit, at }. */
  launches: () => join(stateDir(), "emulator-launches.jsonl"),
};

export function avds() {
  return readJson(avdPaths.avds(), {});
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Runs `change(devices)` on devices.json under the lab's lock and writes what it returns. */
export function updateDevices(change) {
  const lock = join(stateDir(), "devices.lock");
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      // A holder that died with the lock (killed mid-write) must not wedge the lab: 2 s is far past any write.
      if (Date.now() - started > 2000) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      Atomics.wait(sleeper, 0, 0, 2);
    }
  }
  try {
    writeJson(paths.devices(), change(allDevices()));
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** What a device holds that a snapshot or a wipe puts back: its packages, its files and its screen. */
const DEVICE_PARTS = ["packages.json", "fs", "screen.json"];

/** Replaces the device's contents with those kept in `from` (a snapshot or the userdata); empty when absent. */
export function restoreDevice(serial, from) {
  const device = paths.device(serial);
  mkdirSync(device, { recursive: true });
  for (const part of DEVICE_PARTS) {
    rmSync(join(device, part), { recursive: true, force: true });
    if (from && existsSync(join(from, part)))
      cpSync(join(from, part), join(device, part), { recursive: true });
  }
}

/** Keeps the device's contents in `to` (a snapshot or the userdata), replacing what was there. */
export function keepDevice(serial, to) {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  const device = paths.device(serial);
  for (const part of DEVICE_PARTS) {
    if (existsSync(join(device, part))) cpSync(join(device, part), join(to, part), { recursive: true });
  }
}

/** The running instance on emulator-PORT, or undefined: its device record, which carries `emulator`. */
export function instance(serial) {
  return allDevices().find((d) => d.serial === serial && d.emulator && d.attached !== false);
}

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export { writeJson };
