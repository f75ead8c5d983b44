// The Apple lab's shared state (FAKE_XCODE_STATE): simulators and devices, what is installed on each, their
// logs, the suites xcodebuild runs. Several stand-in processes run at once (a `log stream` follower while
// xcodebuild writes), so JSON files are replaced atomically (state.mjs) and logs are append-only.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { appendLine, readJson, writeJson } from "./state.mjs";

export { appendLine, readJson, writeJson };

export function xcodeStateDir() {
  const dir = process.env.FAKE_XCODE_STATE;
  if (!dir) {
    process.stderr.write("stand-in: FAKE_XCODE_STATE is not set (create an Apple lab first)\n");
    process.exit(1);
  }
  return dir;
}

export const applePaths = {
  simulators: () => join(xcodeStateDir(), "simulators.json"),
  devices: () => join(xcodeStateDir(), "devices.json"),
  suites: () => join(xcodeStateDir(), "suites.json"),
  calls: () => join(xcodeStateDir(), "calls.jsonl"),
  /** Present while CoreSimulatorService is unreachable (lab.breakCoreSimulator): every simctl command fails. */
  coreSimulatorDown: () => join(xcodeStateDir(), "coresimulator-down.json"),
  /** What simulators created under a name get (lab.onCreate): e.g. `bootFailures`. */
  createPolicies: () => join(xcodeStateDir(), "create-policies.json"),
  target: (id) => join(xcodeStateDir(), "dev", encodeURIComponent(id)),
  apps: (id) => join(applePaths.target(id), "apps.json"),
  /**
   * What changes on a simulator (state, boot times, crashes), one file each: simulators booted at once by
   * parallel shards must not overwrite each other's state, as one shared file rewritten whole would.
   */
  simulatorState: (udid) => join(applePaths.target(udid), "simulator.json"),
  log: (id) => join(applePaths.target(id), "device.log"),
  /** A crash ordered by the lab (lab.crash): the running test takes the simulator down. */
  crash: (id) => join(applePaths.target(id), "crash.json"),
  /** How many times each test with `outcomes` ran on the device ("Target/Class/method" → n). */
  testRuns: (id) => join(applePaths.target(id), "test-runs.json"),
  /**
   * Each `xcodebuild test-without-building` run on the device, in order: per target that ran, the app installed
   * under the bundle ID its tests drive (UI tests) or are hosted in (unit tests) when they ran.
   */
  testSessions: (id) => join(applePaths.target(id), "test-sessions.json"),
  /** A simulator `simctl create` made (one file each: two creates at once must not lose one). */
  created: (udid) => join(applePaths.target(udid), "created.json"),
  /** Each `simctl install` there, with the bundle IDs that were installed just before it (append-only). */
  installs: (id) => join(applePaths.target(id), "installs.jsonl"),
};

export function recordXcodeCall(tool, argv) {
  appendLine(applePaths.calls(), JSON.stringify({ tool, argv, at: Date.now() }));
}

export function timeScale() {
  const raw = process.env.FAKE_XCODE_TIME_SCALE;
  const scale = raw === undefined || raw === "" ? 1 : Number(raw);
  return Number.isFinite(scale) && scale >= 0 ? scale : 1;
}

/** The Xcode the lab pretends to be (FAKE_XCODE_VERSION, major version; 16 unless set). */
export function xcodeVersion() {
  const major = Number.parseInt(process.env.FAKE_XCODE_VERSION ?? "", 10);
  return Number.isFinite(major) ? major : 16;
}

export function sleepDevice(deviceMs, speed = 1) {
  const ms = (deviceMs / (speed > 0 ? speed : 1)) * timeScale();
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Seconds a boot takes on a simulator (device time; FAKE_XCODE_TIME_SCALE shortens it). */
export const BOOT_MS = 4000;

/**
 * The simulators as the lab made them and as `simctl create` added them (in the order they were created), with
 * what has changed on each since; a deleted one (`simctl delete`, lab.vanish) is no longer there.
 */
export function allSimulators() {
  const made = readJson(applePaths.simulators(), []);
  const created = listDir(join(xcodeStateDir(), "dev"))
    .map((dir) => readJson(applePaths.created(decodeURIComponent(dir)), null))
    .filter(Boolean)
    .sort((a, b) => a.createdAt - b.createdAt);
  return [...made, ...created]
    .map((s) => ({ ...s, ...readJson(applePaths.simulatorState(s.udid), {}) }))
    .filter((s) => !s.deleted);
}

export function findSimulator(udid) {
  return allSimulators().find((s) => s.udid === udid);
}

export function updateSimulator(udid, change) {
  const file = applePaths.simulatorState(udid);
  writeJson(file, { ...readJson(file, {}), ...change });
  return findSimulator(udid);
}

export function allPhysicalDevices() {
  return readJson(applePaths.devices(), []);
}

/** A physical device by devicectl identifier or by UDID (xcodebuild's -destination id= takes the UDID). */
export function findPhysicalDevice(id) {
  return allPhysicalDevices().find((d) => d.identifier === id || d.udid === id);
}

export function installedApps(id) {
  return readJson(applePaths.apps(id), {});
}

export function setInstalledApps(id, apps) {
  writeJson(applePaths.apps(id), apps);
}

/** The device log: one JSON record per line, rendered by `log stream` in the style asked for. */
export function logTo(id, process_, pid, message, { subsystem = "", category = "", type = "Default" } = {}) {
  appendLine(
    applePaths.log(id),
    JSON.stringify({ at: Date.now(), process: process_, pid, message, subsystem, category, type }),
  );
}

export function listDir(dir) {
  return existsSync(dir) ? readdirSync(dir) : [];
}
