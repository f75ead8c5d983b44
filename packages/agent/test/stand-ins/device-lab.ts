// Test-side API of the adb/maestro stand-ins: builds a FAKE_ADB_STATE directory, hands out the
// environment that puts stand-ins/bin first on PATH, and reads back what the stand-ins did.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { removeLabDir } from "./remove-lab-dir.ts";

export const STAND_INS_BIN = fileURLToPath(new URL("./bin", import.meta.url));

export type Outcome = "pass" | "fail" | "error" | "ignored" | "assumption" | "crash";

/**
 * A test of a suite: `outcome`, how it ends every time it runs, or `outcomes`, how it ends on its first,
 * second, … run on a device (the last one again once they run out), e.g. ["fail", "pass"] for a flaky test
 * that passes when it is rerun; `outcomes` wins when both are given. `-e log true` listings are not runs.
 */
export interface SuiteTest {
  class: string;
  method: string;
  outcome?: Outcome;
  outcomes?: Outcome[];
  /**
   * `outcomes` count only the runs since the app under test was last installed on the device, so with
   * ["fail", "pass"] the first run after each install fails and a rerun passes (a cold start's flake).
   */
  sinceInstall?: boolean;
  /** Device time the test body takes; shortened by FAKE_ADB_TIME_SCALE. */
  duration_ms?: number;
  /** Java stack trace text; a plausible one is generated when absent. */
  stack?: string;
  /** Lines the test logs: "L/Tag: message" (L one of VDIWEF) or plain text (I/TestApp). */
  logcat?: string[];
  /** Fully qualified annotation names, e.g. "androidx.test.filters.SmallTest". */
  annotations?: string[];
  size?: "small" | "medium" | "large";
  /**
   * Files the test writes on the device when it runs (device path → contents), as a screenshot library or an
   * Allure listener does: what `adb pull` of its directory then finds (not on a `-e log true` listing).
   */
  writes?: Record<string, string>;
}

export interface Suite {
  tests: SuiteTest[];
  /** The device disappears once this many tests have ended (the running shell dies with it). */
  vanishAfterTests?: number;
}

export interface DeviceSpec {
  serial: string;
  model?: string;
  manufacturer?: string;
  release?: string;
  sdk?: number;
  abis?: string[];
  /** `adb devices` state; "device" unless given. */
  state?: "device" | "offline" | "unauthorized";
  product?: string;
  device?: string;
  /** USB port path shown by `adb devices -l` for physical devices, e.g. "1-1". */
  usb?: string;
  screen?: [number, number];
  screenColor?: [number, number, number];
  /**
   * How fast the device runs tests against their `duration_ms` (and maestro's commands): 1 unless given;
   * 0.5 takes twice as long, as an older model beside newer ones does.
   */
  speed?: number;
  /** The build's locale (`ro.product.locale`), "en-US" unless given. */
  locale?: string;
}

export interface DeviceRecord extends Required<Omit<DeviceSpec, "usb" | "screenColor" | "locale">> {
  usb?: string;
  locale?: string;
  screenColor?: [number, number, number];
  transportId: number;
  attached: boolean;
}

export interface InstalledPackage {
  package: string;
  versionCode: number;
  versionName: string | null;
  minSdkVersion: number;
  targetSdkVersion: number | null;
  testOnly: boolean;
  instrumentation: { name: string; targetPackage: string } | null;
  permissions: string[];
  grantedPermissions: string[];
  /** The adb install flags used last, e.g. ["-r", "-t", "-g"]. */
  flags: string[];
  apkPath: string;
  installs: number;
  dataClears: number;
}

export interface Call {
  tool: "adb" | "maestro" | "emulator" | "avdmanager";
  argv: string[];
  serial: string | null;
  at: number;
}

/**
 * An Android Virtual Device the emulator stand-in can start (`emulator -avd NAME`): its instances are devices
 * emulator-PORT with these properties. Times are device time, shortened by the lab's time scale.
 */
export interface AvdSpec {
  name: string;
  /** ro.product.model of its instances: "sdk_gphone64_x86_64" unless given, as Google's system images say. */
  model?: string;
  release?: string;
  sdk?: number;
  abis?: string[];
  /** The system image's tag: "google_apis" unless given. */
  tag?: string;
  /** avdmanager's `Device:` (the hardware profile): "pixel_7" unless given. */
  hardware?: string;
  screen?: [number, number];
  /** A cold boot, from the start of the process to sys.boot_completed=1: 20000 ms unless given. */
  bootMs?: number;
  /** A boot from a snapshot, and `emu avd snapshot load`: 2000 ms unless given. */
  snapshotLoadMs?: number;
}

/** A running instance of the emulator stand-in, as the lab sees it. */
export interface EmulatorInstance {
  serial: string;
  avd: string;
  pid: number;
  port: number;
  readOnly: boolean;
  /** The -snapshot it was started with, or null. */
  snapshot: string | null;
  state: "offline" | "device";
  bootCompleted: boolean;
}

export interface EmulatorLaunch {
  avd?: string;
  port: number;
  pid: number;
  argv?: string[];
  /** Present on the line written when the instance ended: its exit status. */
  exit?: number;
  at: number;
}

export interface DeviceLabOptions {
  devices?: DeviceSpec[];
  /** AVDs for the emulator stand-in (bin/emulator, bin/avdmanager). */
  avds?: AvdSpec[];
  suites?: Record<string, Suite>;
  /** FAKE_ADB_TIME_SCALE: 0.01 makes a 1000 ms test take 10 ms. Default 1. */
  timeScale?: number;
  /** Extra PATH entries after the stand-ins (default: the current PATH). */
  path?: string;
}

export interface DeviceLab {
  /** PATH with stand-ins/bin first, FAKE_ADB_STATE, FAKE_ADB_TIME_SCALE. */
  env: Record<string, string>;
  stateDir: string;
  installed(serial: string): Record<string, InstalledPackage>;
  /** Device files by device path ("/sdcard/a.mp4" → bytes). */
  files(serial: string): Record<string, Buffer>;
  calls(): Call[];
  logcat(serial: string): string[];
  /** How many times each test with `outcomes` ran on the device, by "Class#method". */
  testRuns(serial: string): Record<string, number>;
  devices(): DeviceRecord[];
  unplug(serial: string): void;
  plug(device: DeviceSpec): void;
  setSuite(testPackage: string, suite: Suite): void;
  /**
   * From now on no adb server can start: every adb command fails as a real one does then ("adb: failed to
   * check server version: cannot connect to daemon", exit 1), `adb devices` included, until mendServer().
   */
  breakServer(): void;
  mendServer(): void;
  /** Puts a package on the device as if installed earlier (e.g. a newer version already there). */
  preinstall(
    serial: string,
    pkg: Pick<InstalledPackage, "package" | "versionCode"> & Partial<InstalledPackage>,
  ): void;
  /**
   * Every successful `adb install`, in order, with whether the package was already on the device then: the lab's
   * record, which survives snapshot loads and restarts (unlike the device's own packages).
   */
  installLog(): Array<{ serial: string; package: string; alreadyInstalled: boolean; at: number }>;
  /** The emulator stand-in's instances whose process is alive. */
  emulators(): EmulatorInstance[];
  /** Every emulator launch and exit so far, in order. */
  emulatorLaunches(): EmulatorLaunch[];
  /** The named snapshots an AVD holds (`emu avd snapshot save`), and the packages each keeps. */
  snapshots(avd: string): Record<string, Record<string, InstalledPackage>>;
  /** The instance stays up but adb sees its device `offline` (adbd hung), as a wedged emulator. */
  offline(serial: string): void;
  /** The instance's process dies at once (exit 139), its device gone from adb, as an emulator that crashed. */
  crashEmulator(serial: string): void;
  /**
   * The AVD's next `count` launches do not boot: `exit` prints the recorded fatal snapshot-timeout line and
   * exits 1; `hang` stays offline until killed.
   */
  failBoots(avd: string, count: number, mode: "exit" | "hang"): void;
  cleanup(): void;
}

function writeJson(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2));
  renameSync(tmp, path);
}

function readJson<T>(path: string, fallback: T): T {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as T) : fallback;
}

function record(spec: DeviceSpec, transportId: number): DeviceRecord {
  const model = spec.model ?? "sdk_gphone64_x86_64";
  const codename = model.toLowerCase().replace(/[^a-z0-9]+/g, "_");
  return {
    serial: spec.serial,
    model,
    manufacturer: spec.manufacturer ?? "Google",
    release: spec.release ?? "14",
    sdk: spec.sdk ?? 34,
    abis: spec.abis ?? ["x86_64", "arm64-v8a"],
    state: spec.state ?? "device",
    product: spec.product ?? codename,
    device: spec.device ?? codename,
    usb: spec.usb,
    screen: spec.screen ?? [1080, 2400],
    screenColor: spec.screenColor,
    speed: spec.speed ?? 1,
    transportId,
    attached: true,
  };
}

function avdRecord(spec: AvdSpec) {
  const model = spec.model ?? "sdk_gphone64_x86_64";
  return {
    name: spec.name,
    model,
    release: spec.release ?? "14",
    sdk: spec.sdk ?? 34,
    abis: spec.abis ?? ["x86_64", "arm64-v8a"],
    tag: spec.tag ?? "google_apis",
    hardware: spec.hardware ?? "pixel_7",
    product: model,
    device: model.startsWith("sdk_gphone64") ? "emu64xa" : model.toLowerCase().replace(/[^a-z0-9]+/g, "_"),
    screen: spec.screen ?? [1080, 2400],
    bootMs: spec.bootMs ?? 20_000,
    snapshotLoadMs: spec.snapshotLoadMs ?? 2000,
  };
}

function walk(root: string, dir: string, out: Record<string, Buffer>): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    try {
      if (statSync(full).isDirectory()) walk(root, full, out);
      else out[`/${relative(root, full).split("\\").join("/")}`] = readFileSync(full);
    } catch (error) {
      // Gone between the listing and the read: a stand-in process renamed or removed it meanwhile (screenrecord
      // writes a .part file and renames it when it stops). The device no longer has it.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
}

export async function createDeviceLab(options: DeviceLabOptions = {}): Promise<DeviceLab> {
  const stateDir = mkdtempSync(join(tmpdir(), "testbay-device-lab-"));
  const devicesFile = join(stateDir, "devices.json");
  const suitesFile = join(stateDir, "suites.json");
  const deviceDir = (serial: string) => join(stateDir, "dev", encodeURIComponent(serial));
  let nextTransport = 1;
  writeJson(
    devicesFile,
    (options.devices ?? []).map((d) => record(d, nextTransport++)),
  );
  writeJson(suitesFile, options.suites ?? {});
  writeJson(
    join(stateDir, "avds.json"),
    Object.fromEntries((options.avds ?? []).map((avd) => [avd.name, avdRecord(avd)])),
  );
  const avdDir = (name: string) => join(stateDir, "avd", encodeURIComponent(name));
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  const env = {
    PATH: [STAND_INS_BIN, options.path ?? process.env.PATH ?? ""].join(delimiter),
    FAKE_ADB_STATE: stateDir,
    FAKE_ADB_TIME_SCALE: String(options.timeScale ?? 1),
  };

  const lab: DeviceLab = {
    env,
    stateDir,
    installed: (serial) => readJson(join(deviceDir(serial), "packages.json"), {}),
    files(serial) {
      const root = join(deviceDir(serial), "fs");
      const out: Record<string, Buffer> = {};
      walk(root, root, out);
      return out;
    },
    calls() {
      const file = join(stateDir, "calls.jsonl");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Call);
    },
    logcat(serial) {
      const file = join(deviceDir(serial), "logcat.log");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8").split("\n").filter(Boolean);
    },
    testRuns: (serial) => readJson(join(deviceDir(serial), "test-runs.json"), {}),
    devices: () => readJson<DeviceRecord[]>(devicesFile, []),
    unplug(serial) {
      const devices = lab.devices();
      if (!devices.some((d) => d.serial === serial)) throw new Error(`no device ${serial} in the lab`);
      writeJson(
        devicesFile,
        devices.map((d) => (d.serial === serial ? { ...d, attached: false } : d)),
      );
    },
    plug(spec) {
      const devices = lab.devices().filter((d) => d.serial !== spec.serial);
      const maxId = Math.max(0, ...lab.devices().map((d) => d.transportId));
      // A replugged device gets a new transport id, as the adb server hands out.
      writeJson(devicesFile, [...devices, record(spec, maxId + 1)]);
    },
    breakServer() {
      writeJson(join(stateDir, "server-down.json"), { since: Date.now() });
    },
    mendServer() {
      rmSync(join(stateDir, "server-down.json"), { force: true });
    },
    setSuite(testPackage, suite) {
      writeJson(suitesFile, { ...readJson<Record<string, Suite>>(suitesFile, {}), [testPackage]: suite });
    },
    preinstall(serial, pkg) {
      const file = join(deviceDir(serial), "packages.json");
      mkdirSync(deviceDir(serial), { recursive: true });
      const full: InstalledPackage = {
        versionName: null,
        minSdkVersion: 1,
        targetSdkVersion: null,
        testOnly: false,
        instrumentation: null,
        permissions: [],
        grantedPermissions: [],
        flags: [],
        apkPath: "(preinstalled)",
        installs: 1,
        dataClears: 0,
        ...pkg,
      };
      writeJson(file, { ...readJson<Record<string, InstalledPackage>>(file, {}), [pkg.package]: full });
    },
    emulators() {
      return lab.devices().flatMap((d) => {
        const e = (
          d as DeviceRecord & { emulator?: Omit<EmulatorInstance, "serial" | "state" | "bootCompleted"> }
        ).emulator;
        if (!e || !d.attached || !alive(e.pid)) return [];
        const bootCompleted = (d as { bootCompleted?: boolean }).bootCompleted === true;
        return [
          {
            serial: d.serial,
            avd: e.avd,
            pid: e.pid,
            port: e.port,
            readOnly: e.readOnly,
            snapshot: e.snapshot,
            state: d.state as EmulatorInstance["state"],
            bootCompleted,
          },
        ];
      });
    },
    installLog() {
      const file = join(stateDir, "installs.jsonl");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    },
    emulatorLaunches() {
      const file = join(stateDir, "emulator-launches.jsonl");
      if (!existsSync(file)) return [];
      return readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as EmulatorLaunch);
    },
    snapshots(avd) {
      const dir = join(avdDir(avd), "snapshots");
      if (!existsSync(dir)) return {};
      return Object.fromEntries(
        readdirSync(dir).map((name) => [
          decodeURIComponent(name),
          readJson(join(dir, name, "packages.json"), {}),
        ]),
      );
    },
    offline(serial) {
      writeJson(
        devicesFile,
        lab.devices().map((d) => (d.serial === serial ? { ...d, state: "offline" } : d)),
      );
    },
    crashEmulator(serial) {
      mkdirSync(join(stateDir, "crash-requests"), { recursive: true });
      writeFileSync(join(stateDir, "crash-requests", encodeURIComponent(serial)), "");
    },
    failBoots(avd, count, mode) {
      mkdirSync(avdDir(avd), { recursive: true });
      writeJson(join(avdDir(avd), "fail-boots.json"), { count, mode });
    },
    cleanup() {
      // The lab's emulators go with it: a test that failed before stopping its agent leaves none running.
      for (const e of lab.emulators()) process.kill(e.pid, "SIGKILL");
      removeLabDir(stateDir);
    },
  };
  return lab;
}
