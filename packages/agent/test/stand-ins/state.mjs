// The device lab's shared state. Many stand-in processes run at once (a logcat follower reads
// while `am instrument` writes), so every JSON file is replaced atomically by rename and logs are
// append-only files. The directory is named by FAKE_ADB_STATE.
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export function stateDir() {
  const dir = process.env.FAKE_ADB_STATE;
  if (!dir) {
    process.stderr.write("stand-in: FAKE_ADB_STATE is not set (create a device lab first)\n");
    process.exit(1);
  }
  return dir;
}

export function readJson(path, fallback) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    if (error.code === "ENOENT") return fallback;
    throw error;
  }
}

let tmpCounter = 0;
export function writeJson(path, value) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${tmpCounter++}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2));
  renameSync(tmp, path);
}

export function appendLine(path, line) {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${line}\n`);
}

export const paths = {
  devices: () => join(stateDir(), "devices.json"),
  suites: () => join(stateDir(), "suites.json"),
  calls: () => join(stateDir(), "calls.jsonl"),
  /** Present while the lab's adb server cannot start (lab.breakServer): every command fails as adb does then. */
  serverDown: () => join(stateDir(), "server-down.json"),
  device: (serial) => join(stateDir(), "dev", encodeURIComponent(serial)),
  packages: (serial) => join(paths.device(serial), "packages.json"),
  /** How many times each test ran on the device ("Class#method" → n), for tests with `outcomes`. */
  testRuns: (serial) => join(paths.device(serial), "test-runs.json"),
  /** For tests with `sinceInstall`: "Class#method" → { install: the app's install count then, runs since it }. */
  testRunsSinceInstall: (serial) => join(paths.device(serial), "test-runs-since-install.json"),
  logcat: (serial) => join(paths.device(serial), "logcat.log"),
  logcatStart: (serial) => join(paths.device(serial), "logcat-start.json"),
  procs: (serial) => join(paths.device(serial), "procs"),
  /** What the screen shows once a test ran: { app, class, method, state, message } (instrument.mjs, screencap.mjs). */
  screen: (serial) => join(paths.device(serial), "screen.json"),
  fs: (serial) => join(paths.device(serial), "fs"),
};

/** Every device the lab knows, including unplugged ones (`attached: false`). */
export function allDevices() {
  return readJson(paths.devices(), []);
}

export function findDevice(serial) {
  return allDevices().find((d) => d.serial === serial);
}

export function isAttached(serial) {
  const device = findDevice(serial);
  return device !== undefined && device.attached !== false;
}

export function setAttached(serial, attached) {
  const devices = allDevices().map((d) => (d.serial === serial ? { ...d, attached } : d));
  writeJson(paths.devices(), devices);
}

export function recordCall(tool, argv, serial) {
  appendLine(paths.calls(), JSON.stringify({ tool, argv, serial: serial ?? null, at: Date.now() }));
}

/** Maps a device path such as /sdcard/a.mp4 into the device's folder on the host. */
export function hostPath(serial, devicePath) {
  const clean = devicePath.replace(/\/+$/, "") || "/";
  return join(paths.fs(serial), clean);
}

export function timeScale() {
  const raw = process.env.FAKE_ADB_TIME_SCALE;
  const scale = raw === undefined || raw === "" ? 1 : Number(raw);
  return Number.isFinite(scale) && scale >= 0 ? scale : 1;
}

/**
 * How fast the device is against the suite's durations: its `speed` field (1 unless given; 0.5 takes twice as
 * long), so a lab can hold a slow device next to fast ones, as a real lab of mixed models does.
 */
export function deviceSpeed(serial) {
  const speed = serial === undefined ? 1 : findDevice(serial)?.speed;
  return typeof speed === "number" && speed > 0 ? speed : 1;
}

/** How long `deviceMs` of work takes on the device `serial` (at its speed), shortened by FAKE_ADB_TIME_SCALE. */
export function deviceWaitMs(deviceMs, serial) {
  return (deviceMs / deviceSpeed(serial)) * timeScale();
}

/** Waits `deviceMs` of work on the device `serial`: see deviceWaitMs. */
export function deviceSleep(deviceMs, serial) {
  return new Promise((resolve) => setTimeout(resolve, deviceWaitMs(deviceMs, serial)));
}

/**
 * Calls `onGone` once the device is unplugged or vanishes. Polling, because fs.watch misses
 * rename-replaced files on some file systems and these processes are short-lived anyway.
 */
export function watchAttached(serial, onGone) {
  const timer = setInterval(() => {
    if (!isAttached(serial)) {
      clearInterval(timer);
      onGone();
    }
  }, 15);
  timer.unref();
  return () => clearInterval(timer);
}

export { existsSync };
