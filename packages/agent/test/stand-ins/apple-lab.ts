// Test-side API of the Apple stand-ins (bin/xcrun, bin/xcodebuild): builds a FAKE_XCODE_STATE directory with
// simulators, devices and the XCTest suites xcodebuild runs, hands out the environment that puts stand-ins/bin
// first on PATH, reads back what the stand-ins did, and builds the bundles an iOS run needs: an app (.app, a
// zipped .app or an IPA) and a test package (a zip of what `xcodebuild build-for-testing` writes).
import { type ChildProcess, spawn } from "node:child_process";
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
import { crc32 } from "node:zlib";
import { removeLabDir } from "./remove-lab-dir.ts";

export const STAND_INS_BIN = fileURLToPath(new URL("./bin", import.meta.url));

/** How an XCTest test ends: "crash" takes the simulator down in the middle of it (Shutdown). */
export type XcOutcome = "pass" | "fail" | "skip" | "expected-failure" | "crash";

export interface XcSuiteTest {
  class: string;
  method: string;
  /** How it ends every time; `outcomes` (its 1st, 2nd, … run on a device, the last one again after) wins. */
  outcome?: XcOutcome;
  outcomes?: XcOutcome[];
  /** Device time the test takes (default 100); shortened by FAKE_XCODE_TIME_SCALE, lengthened by a slow device. */
  duration_ms?: number;
  /** The assertion's text for fail/skip/expected-failure (defaults: "XCTAssertTrue failed", …). */
  message?: string;
  /** Lines the app logs while the test runs (the device log `simctl spawn … log stream` follows). */
  log?: string[];
  /** Source file and line of the failure (defaults: /Users/testbay/src/<Target>/<Class>.swift:42). */
  file?: string;
  line?: number;
  /** "swift" (default: results name the method "m()") or "objc". */
  language?: "swift" | "objc";
}

export interface XcSuite {
  tests: XcSuiteTest[];
  language?: "swift" | "objc";
}

export interface SimulatorSpec {
  udid: string;
  name: string;
  /** A runtime identifier, e.g. "com.apple.CoreSimulator.SimRuntime.iOS-18-0". */
  runtime: string;
  state?: "Shutdown" | "Booted";
  deviceTypeIdentifier?: string;
  isAvailable?: boolean;
  osVersion?: string;
  osBuild?: string;
  model?: string;
  /** How fast it runs tests and boots against their durations (1; 0.5 takes twice as long). */
  speed?: number;
  screen?: [number, number];
  screenColor?: [number, number, number];
}

export interface PhysicalDeviceSpec {
  /** devicectl's identifier (a UUID). */
  identifier: string;
  /** The hardware UDID xcodebuild's -destination id= takes. */
  udid: string;
  name: string;
  model?: string;
  productType?: string;
  osVersion?: string;
  osBuild?: string;
  connected?: boolean;
  speed?: number;
}

export interface InstalledApp {
  bundleId: string;
  name: string;
  version: string | null;
  build: string | null;
  /** The bundle it was installed from. */
  path: string;
  installs: number;
  installedBy: "simctl" | "devicectl" | "xcodebuild";
  installedAt: number;
}

export interface TestSession {
  at: number;
  /** The .xctestrun xcodebuild was given (absolute). */
  xctestrun: string;
  targets: Array<{
    name: string;
    app: Pick<InstalledApp, "bundleId" | "version" | "build" | "path"> | null;
  }>;
}

export interface XcodeCall {
  tool: "xcrun" | "xcodebuild";
  argv: string[];
  at: number;
}

export interface SimulatorRecord extends SimulatorSpec {
  state: "Shutdown" | "Booted";
  lastBootedAt?: string;
  crashes?: number;
  erased?: number;
  /** Boots that failed on the lab's cue (failBoot, onCreate). */
  failedBoots?: number;
  /** When `simctl create` made it (absent for the lab's own simulators). */
  createdAt?: number;
}

/** A device type of the lab's Xcode (`simctl list devicetypes`), which `simctl create` accepts by name or identifier. */
export interface DeviceTypeSpec {
  name: string;
  identifier: string;
  productFamily?: "iPhone" | "iPad";
  /** E.g. "iPhone15,4". */
  modelIdentifier?: string;
  minRuntimeVersionString?: string;
}

/** An iOS runtime installed in the lab's Xcode (`simctl list runtimes`). */
export interface RuntimeSpec {
  /** "17.4". */
  version: string;
  /** Default "com.apple.CoreSimulator.SimRuntime.iOS-17-4". */
  identifier?: string;
  /** E.g. "21E213". */
  buildversion?: string;
  /** Device type identifiers it can run (default: every device type of the lab). */
  supportedDeviceTypes?: string[];
}

/** One `simctl install` on a simulator, with what was installed there just before it. */
export interface InstallRecord {
  at: number;
  bundleId: string;
  alreadyInstalled: string[];
}

/** The device types of a lab that names none: iPhones and an iPad of recent Xcodes (identifiers as Apple's). */
export const DEFAULT_DEVICE_TYPES: DeviceTypeSpec[] = [
  {
    name: "iPhone SE (3rd generation)",
    identifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-SE-3rd-generation",
    modelIdentifier: "iPhone14,6",
    minRuntimeVersionString: "15.4.0",
  },
  {
    name: "iPhone 15",
    identifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-15",
    modelIdentifier: "iPhone15,4",
    minRuntimeVersionString: "17.0.0",
  },
  {
    name: "iPhone 15 Pro",
    identifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-15-Pro",
    modelIdentifier: "iPhone16,1",
    minRuntimeVersionString: "17.0.0",
  },
  {
    name: "iPhone 16 Pro",
    identifier: "com.apple.CoreSimulator.SimDeviceType.iPhone-16-Pro",
    modelIdentifier: "iPhone17,1",
    minRuntimeVersionString: "18.0.0",
  },
  {
    name: "iPad Air 11-inch (M2)",
    identifier: "com.apple.CoreSimulator.SimDeviceType.iPad-Air-11-inch-M2",
    productFamily: "iPad",
    modelIdentifier: "iPad14,8",
    minRuntimeVersionString: "17.4.0",
  },
];

/** The runtimes of a lab that names none. */
export const DEFAULT_RUNTIMES: RuntimeSpec[] = [
  { version: "17.4", buildversion: "21E213" },
  { version: "17.5", buildversion: "21F79" },
  { version: "18.0", buildversion: "22A3351" },
];

function runtimeIdentifier(version: string): string {
  return `com.apple.CoreSimulator.SimRuntime.iOS-${version.replaceAll(".", "-")}`;
}

export interface LogEntry {
  at: number;
  process: string;
  pid: number;
  message: string;
}

export interface AppleLabOptions {
  simulators?: SimulatorSpec[];
  devices?: PhysicalDeviceSpec[];
  /** By test target name (the xctestrun's BlueprintName). */
  suites?: Record<string, XcSuite>;
  /** The device types `simctl create` can make (DEFAULT_DEVICE_TYPES unless given). */
  deviceTypes?: DeviceTypeSpec[];
  /**
   * The installed iOS runtimes (DEFAULT_RUNTIMES unless given; a runtime a simulator of the lab names is added
   * when missing, supporting every device type).
   */
  runtimes?: RuntimeSpec[];
  /** FAKE_XCODE_TIME_SCALE: 0.01 makes a 1000 ms test take 10 ms. Default 1. */
  timeScale?: number;
  /**
   * FAKE_XCODE_VERSION, the major Xcode version (default 16). Before 16: no `xcresulttool get test-results` or
   * `export attachments`, the legacy graph without --legacy (which is unknown), no `xcodebuild -enumerate-tests`.
   */
  xcodeVersion?: number;
  path?: string;
}

export interface AppleLab {
  /** PATH with stand-ins/bin first, FAKE_XCODE_STATE, FAKE_XCODE_TIME_SCALE, FAKE_XCODE_VERSION. */
  env: Record<string, string>;
  stateDir: string;
  /** What is installed on a simulator (by UDID) or a device (by devicectl identifier), by bundle id. */
  installed(id: string): Record<string, InstalledApp>;
  /** The device log, oldest first. */
  log(id: string): LogEntry[];
  calls(): XcodeCall[];
  /** The next (or running) test on that simulator takes it down: the test fails, the simulator is Shutdown. */
  crash(udid: string): void;
  /** Unplugs a physical device (by identifier): devicectl no longer reaches it, a running test on it is lost. */
  disconnect(identifier: string): void;
  /**
   * From now on CoreSimulatorService cannot be reached: every `xcrun simctl` command fails ("CoreSimulatorService
   * connection became invalid…"), until mendCoreSimulator(). devicectl and xcodebuild are not affected.
   */
  breakCoreSimulator(): void;
  mendCoreSimulator(): void;
  /** Every simulator, the lab's own first, then those `simctl create` made; deleted ones are gone. */
  simulators(): SimulatorRecord[];
  /**
   * The next `times` boots of that simulator fail (every one from now on without `times`), with simctl's
   * recorded launchd failure; it stays Shutdown. `times: 0` mends it.
   */
  failBoot(udid: string, times?: number): void;
  /** Simulators `simctl create` makes under this name from now on get these: e.g. `{ bootFailures: -1 }`. */
  onCreate(name: string, settings: { bootFailures?: number; speed?: number }): void;
  /** Deletes a simulator behind everyone's back (as `simctl delete` by another user): it is no longer listed. */
  vanish(udid: string): void;
  /** Each `simctl install` on a simulator, oldest first, with what was installed just before it. */
  installs(udid: string): InstallRecord[];
  /** How many times each test with `outcomes` ran there, by "Target/Class/method". */
  testRuns(id: string): Record<string, number>;
  /**
   * Each `xcodebuild test-without-building` run there, in order: per target that ran, the app installed under
   * the bundle ID its tests drive (UI tests) or are hosted in (unit tests) at the time they ran; null if none.
   */
  testSessions(id: string): TestSession[];
  setSuite(target: string, suite: XcSuite): void;
  /** Puts an app on a simulator or device as if installed earlier. */
  preinstall(id: string, app: Pick<InstalledApp, "bundleId" | "name"> & Partial<InstalledApp>): void;
  cleanup(): void;
}

function writeJson(path: string, value: unknown): void {
  mkdirSync(join(path, ".."), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 2));
  renameSync(tmp, path);
}

function readJson<T>(path: string, fallback: T): T {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as T) : fallback;
}

function simulatorRecord(spec: SimulatorSpec): SimulatorRecord {
  const m = /SimRuntime\.iOS-(\d+)-(\d+)/.exec(spec.runtime);
  return {
    deviceTypeIdentifier: `com.apple.CoreSimulator.SimDeviceType.${spec.name.replace(/[^A-Za-z0-9]+/g, "-")}`,
    osVersion: m ? `${m[1]}.${m[2]}` : "18.0",
    isAvailable: true,
    speed: 1,
    ...spec,
    state: spec.state ?? "Shutdown",
  };
}

export async function createAppleLab(options: AppleLabOptions = {}): Promise<AppleLab> {
  const stateDir = mkdtempSync(join(tmpdir(), "testbay-apple-lab-"));
  const file = (name: string) => join(stateDir, name);
  const target = (id: string) => join(stateDir, "dev", encodeURIComponent(id));
  writeJson(file("simulators.json"), (options.simulators ?? []).map(simulatorRecord));
  writeJson(file("devices.json"), options.devices ?? []);
  writeJson(file("suites.json"), options.suites ?? {});
  const deviceTypes = (options.deviceTypes ?? DEFAULT_DEVICE_TYPES).map((t) => ({
    productFamily: "iPhone",
    modelIdentifier: "iPhone15,4",
    minRuntimeVersionString: "15.0.0",
    ...t,
  }));
  const runtimes = (options.runtimes ?? DEFAULT_RUNTIMES).map((r) => ({
    identifier: runtimeIdentifier(r.version),
    buildversion: "21A000",
    supportedDeviceTypes: deviceTypes.map((t) => t.identifier),
    ...r,
  }));
  for (const sim of options.simulators ?? []) {
    const version = /SimRuntime\.iOS-(\d+(?:-\d+)*)$/.exec(sim.runtime)?.[1]?.replaceAll("-", ".");
    if (version && !runtimes.some((r) => r.identifier === sim.runtime)) {
      runtimes.push({
        identifier: sim.runtime,
        version,
        buildversion: "21A000",
        supportedDeviceTypes: deviceTypes.map((t) => t.identifier),
      });
    }
  }
  writeJson(file("devicetypes.json"), deviceTypes);
  writeJson(file("runtimes.json"), runtimes);
  const env = {
    PATH: [STAND_INS_BIN, options.path ?? process.env.PATH ?? ""].join(delimiter),
    FAKE_XCODE_STATE: stateDir,
    FAKE_XCODE_TIME_SCALE: String(options.timeScale ?? 1),
    FAKE_XCODE_VERSION: String(options.xcodeVersion ?? 16),
  };
  const lab: AppleLab = {
    env,
    stateDir,
    installed: (id) => readJson(join(target(id), "apps.json"), {}),
    log(id) {
      const path = join(target(id), "device.log");
      if (!existsSync(path)) return [];
      return readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as LogEntry);
    },
    calls() {
      const path = file("calls.jsonl");
      if (!existsSync(path)) return [];
      return readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as XcodeCall);
    },
    crash(udid) {
      if (!lab.simulators().some((s) => s.udid === udid)) throw new Error(`no simulator ${udid} in the lab`);
      writeJson(join(target(udid), "crash.json"), { at: Date.now() });
    },
    disconnect(identifier) {
      const devices = readJson<PhysicalDeviceSpec[]>(file("devices.json"), []);
      if (!devices.some((d) => d.identifier === identifier))
        throw new Error(`no device ${identifier} in the lab`);
      writeJson(
        file("devices.json"),
        devices.map((d) => (d.identifier === identifier ? { ...d, connected: false } : d)),
      );
    },
    breakCoreSimulator() {
      writeJson(file("coresimulator-down.json"), { since: Date.now() });
    },
    mendCoreSimulator() {
      rmSync(file("coresimulator-down.json"), { force: true });
    },
    simulators() {
      const dev = join(stateDir, "dev");
      const created = existsSync(dev)
        ? readdirSync(dev)
            .map((d) => readJson<SimulatorRecord | null>(join(dev, d, "created.json"), null))
            .filter((s): s is SimulatorRecord => s !== null)
            .sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0))
        : [];
      return [...readJson<SimulatorRecord[]>(file("simulators.json"), []), ...created]
        .map((s) => ({
          ...s,
          ...readJson<Partial<SimulatorRecord> & { deleted?: boolean }>(
            join(target(s.udid), "simulator.json"),
            {},
          ),
        }))
        .filter((s) => !(s as { deleted?: boolean }).deleted);
    },
    failBoot(udid, times = -1) {
      if (!lab.simulators().some((s) => s.udid === udid)) throw new Error(`no simulator ${udid} in the lab`);
      const path = join(target(udid), "simulator.json");
      writeJson(path, { ...readJson(path, {}), bootFailures: times });
    },
    onCreate(name, settings) {
      const path = file("create-policies.json");
      writeJson(path, { ...readJson(path, {}), [name]: settings });
    },
    vanish(udid) {
      if (!lab.simulators().some((s) => s.udid === udid)) throw new Error(`no simulator ${udid} in the lab`);
      const path = join(target(udid), "simulator.json");
      writeJson(path, { ...readJson(path, {}), state: "Shutdown", readyAt: null, deleted: true });
    },
    installs(udid) {
      const path = join(target(udid), "installs.jsonl");
      if (!existsSync(path)) return [];
      return readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as InstallRecord);
    },
    testRuns: (id) => readJson(join(target(id), "test-runs.json"), {}),
    testSessions: (id) => readJson(join(target(id), "test-sessions.json"), []),
    setSuite(name, suite) {
      writeJson(file("suites.json"), {
        ...readJson<Record<string, XcSuite>>(file("suites.json"), {}),
        [name]: suite,
      });
    },
    preinstall(id, app) {
      const path = join(target(id), "apps.json");
      const full: InstalledApp = {
        version: null,
        build: null,
        path: "(preinstalled)",
        installs: 1,
        installedBy: "simctl",
        installedAt: Date.now(),
        ...app,
      };
      writeJson(path, { ...readJson<Record<string, InstalledApp>>(path, {}), [app.bundleId]: full });
    },
    cleanup() {
      removeLabDir(stateDir);
    },
  };
  return lab;
}

// ---- Running the stand-ins as the agent does -------------------------------------------------------------

export interface XcRan {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface XcRunning {
  child: ChildProcess;
  stdout(): string;
  done: Promise<XcRan>;
}

export function startXc(lab: AppleLab, tool: "xcrun" | "xcodebuild", args: string[]): XcRunning {
  const child = spawn(tool, args, { env: { ...process.env, ...lab.env } });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (b: Buffer) => out.push(b));
  child.stderr?.on("data", (b: Buffer) => err.push(b));
  const done = new Promise<XcRan>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
  return { child, stdout: () => Buffer.concat(out).toString("utf8"), done };
}

export function runXc(lab: AppleLab, tool: "xcrun" | "xcodebuild", args: string[]): Promise<XcRan> {
  return startXc(lab, tool, args).done;
}

// ---- Bundles ------------------------------------------------------------------------------------------------

function plist(value: Record<string, unknown>): string {
  const render = (v: unknown, pad: string): string => {
    if (typeof v === "boolean") return `${pad}<${v}/>`;
    if (typeof v === "number") return `${pad}<integer>${v}</integer>`;
    if (typeof v === "string")
      return `${pad}<string>${v.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</string>`;
    if (Array.isArray(v)) {
      return v.length === 0
        ? `${pad}<array/>`
        : `${pad}<array>\n${v.map((x) => render(x, `${pad}\t`)).join("\n")}\n${pad}</array>`;
    }
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    return `${pad}<dict>\n${entries.map(([k, x]) => `${pad}\t<key>${k}</key>\n${render(x, `${pad}\t`)}`).join("\n")}\n${pad}</dict>`;
  };
  return `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n${render(value, "")}\n</plist>\n`;
}

export interface AppSpec {
  bundleId: string;
  /** The bundle's name without ".app" (CFBundleName and the executable). */
  name: string;
  version?: string;
  build?: string;
  /** Leave CFBundleIdentifier out, as a broken build does. */
  omitBundleId?: boolean;
}

/** Writes NAME.app (Info.plist in XML, an executable file) into `dir`; returns its path. */
export function writeAppBundle(dir: string, app: AppSpec): string {
  const path = join(dir, `${app.name}.app`);
  mkdirSync(path, { recursive: true });
  writeFileSync(
    join(path, "Info.plist"),
    plist({
      CFBundleExecutable: app.name,
      CFBundleIdentifier: app.omitBundleId ? undefined : app.bundleId,
      CFBundleName: app.name,
      CFBundlePackageType: "APPL",
      CFBundleShortVersionString: app.version ?? "1.0",
      CFBundleSupportedPlatforms: ["iPhoneSimulator"],
      CFBundleVersion: app.build ?? "1",
      MinimumOSVersion: "16.0",
    }),
  );
  writeFileSync(join(path, app.name), "\xcf\xfa\xed\xfe stand-in executable\n", { mode: 0o755 });
  return path;
}

function writeXctest(dir: string, name: string, bundleId: string): string {
  const path = join(dir, `${name}.xctest`);
  mkdirSync(path, { recursive: true });
  writeFileSync(
    join(path, "Info.plist"),
    plist({
      CFBundleExecutable: name,
      CFBundleIdentifier: bundleId,
      CFBundleName: name,
      CFBundlePackageType: "BNDL",
    }),
  );
  writeFileSync(join(path, name), "stand-in test bundle\n", { mode: 0o755 });
  return path;
}

/** A zip of `root`'s files (stored, not deflated: `unzip` reads it), paths relative to `root`. */
export function zipDirectory(root: string): Buffer {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else files.push(full);
    }
  };
  walk(root);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const full of files) {
    const name = Buffer.from(relative(root, full).split("\\").join("/"), "utf8");
    const data = readFileSync(full);
    const mode = statSync(full).mode & 0o777;
    const crc = crc32(data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(0, 8);
    local.writeUInt16LE(0x0021, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix: the external attributes carry the mode
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0x0021, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((0o100000 | mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** An iOS app as Testbay receives it: an IPA (Payload/NAME.app) or a zipped NAME.app; returns the file. */
export function buildAppArchive(dir: string, app: AppSpec, kind: "ipa" | "zip" = "ipa"): string {
  const staging = mkdtempSync(join(tmpdir(), "testbay-app-"));
  try {
    writeAppBundle(kind === "ipa" ? join(staging, "Payload") : staging, app);
    const out = join(dir, kind === "ipa" ? `${app.name}.ipa` : `${app.name}.app.zip`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(out, zipDirectory(staging));
    return out;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export interface TestTargetSpec {
  /** BlueprintName, e.g. "AppUITests" (the lab's suites are keyed by it). */
  name: string;
  /** A UI test bundle (runs in NAME-Runner.app against the app) or a unit test bundle hosted by the app. */
  ui: boolean;
  /** Write UITargetAppBundleIdentifier (FormatVersion 2 only). */
  uiTargetAppBundleIdentifier?: string;
  /** Write UITargetAppPath (default true for UI targets): xcodebuild then installs the app from the products. */
  uiTargetAppPath?: boolean;
  onlyTestIdentifiers?: string[];
  skipTestIdentifiers?: string[];
}

export interface TestProductsSpec {
  /** The app under test, built next to the tests (Debug-iphonesimulator/NAME.app). */
  app: AppSpec;
  targets: TestTargetSpec[];
  /** 2 (Xcode 11+, the default) or 1. */
  formatVersion?: 1 | 2;
  planName?: string;
  /** Leave the app out of the products (a package built from the test targets alone). */
  omitApp?: boolean;
}

/**
 * Writes what `xcodebuild build-for-testing` leaves in Build/Products into `dir`: the .xctestrun and
 * Debug-iphonesimulator/ with the app, each UI target's NAME-Runner.app (its NAME.xctest in PlugIns) and each
 * unit target's NAME.xctest inside the app. Returns the .xctestrun path.
 */
export function writeTestProducts(dir: string, spec: TestProductsSpec): string {
  const products = join(dir, "Debug-iphonesimulator");
  mkdirSync(products, { recursive: true });
  if (!spec.omitApp) writeAppBundle(products, spec.app);
  const appPath = `__TESTROOT__/Debug-iphonesimulator/${spec.app.name}.app`;
  const targets = spec.targets.map((t) => {
    if (t.ui) {
      const runner = writeAppBundle(products, {
        bundleId: `${spec.app.bundleId}.${t.name}.xctrunner`,
        name: `${t.name}-Runner`,
      });
      writeXctest(join(runner, "PlugIns"), t.name, `${spec.app.bundleId}.${t.name}`);
    } else if (!spec.omitApp) {
      writeXctest(
        join(products, `${spec.app.name}.app`, "PlugIns"),
        t.name,
        `${spec.app.bundleId}.${t.name}`,
      );
    }
    const runnerPath = `__TESTROOT__/Debug-iphonesimulator/${t.name}-Runner.app`;
    return {
      BlueprintName: t.name,
      IsUITestBundle: t.ui,
      IsXCTRunnerHostedTestBundle: t.ui,
      TestBundlePath: `__TESTHOST__/PlugIns/${t.name}.xctest`,
      TestHostPath: t.ui ? runnerPath : appPath,
      TestHostBundleIdentifier: t.ui ? `${spec.app.bundleId}.${t.name}.xctrunner` : spec.app.bundleId,
      UITargetAppPath: t.ui && t.uiTargetAppPath !== false ? appPath : undefined,
      UITargetAppBundleIdentifier: t.uiTargetAppBundleIdentifier,
      DependentProductPaths: [
        appPath,
        ...(t.ui ? [runnerPath, `${runnerPath}/PlugIns/${t.name}.xctest`] : []),
      ],
      OnlyTestIdentifiers: t.onlyTestIdentifiers,
      SkipTestIdentifiers: t.skipTestIdentifiers,
      ProductModuleName: t.name,
      SystemAttachmentLifetime: "deleteOnSuccess",
      UserAttachmentLifetime: "deleteOnSuccess",
    };
  });
  const planName = spec.planName ?? spec.app.name;
  const version = spec.formatVersion ?? 2;
  const doc =
    version === 2
      ? {
          TestConfigurations: [{ Name: "Test Scheme Action", TestTargets: targets }],
          TestPlan: { IsDefault: true, Name: planName },
          __xctestrun_metadata__: { FormatVersion: 2 },
        }
      : {
          __xctestrun_metadata__: { FormatVersion: 1 },
          ...Object.fromEntries(
            targets.map((t, i) => {
              const { BlueprintName, UITargetAppBundleIdentifier: _, ...rest } = t;
              return [BlueprintName, { ...rest, RunOrder: i }];
            }),
          ),
        };
  const xctestrun = join(dir, `${planName}_iphonesimulator18.0-arm64.xctestrun`);
  writeFileSync(xctestrun, plist(doc));
  return xctestrun;
}

/** The test package an xcuitest step uploads: a zip of writeTestProducts' folder; returns the zip's path. */
export function buildTestPackageZip(dir: string, spec: TestProductsSpec): string {
  const staging = mkdtempSync(join(tmpdir(), "testbay-test-products-"));
  try {
    writeTestProducts(staging, spec);
    mkdirSync(dir, { recursive: true });
    const out = join(dir, `${spec.planName ?? spec.app.name}-tests.zip`);
    writeFileSync(out, zipDirectory(staging));
    return out;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
