// `maestro [--device S] test [--format junit] [--output FILE] [-e K=V]... PATH`, on the adb lab's devices
// (FAKE_ADB_STATE) and the Apple lab's simulators (FAKE_XCODE_STATE): maestro's DeviceService lists both, and
// `--device` is looked up among the connected ones of either lab.
// Flow files: a config document (appId, optional name) then "---" and the command list
// (maestro.mobile.dev flow syntax). Commands that are modelled:
//   launchApp (appId from the config, a string, or {appId}) fails when the app is not installed on the
//   device: on Android with "Unable to launch app <appId>" (same state as adb); on a simulator with the
//   error `simctl launch` gives, which maestro 2.x reports as it is (installed = the Apple lab's state);
//   assertVisible whose text starts with "FAIL" fails with 'Assertion is false: "<text>" is visible'
//   (a rule of this stand-in: there is no screen to look at); one whose text starts with "FAIL <n>x "
//   fails only on the flow's first n runs on that device (a flaky flow; runs counted in the device's
//   state by flow name, as adb and xcodebuild count test runs). Every other command passes.
// ${KEY} is replaced from -e KEY=VALUE everywhere in the flow text before parsing.
// Report: maestro's JUnitTestSuiteReporter layout (testsuites/testsuite name="Test Suite" device=…
// /testcase id name classname time status SUCCESS|ERROR with a <failure> text).
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { parseAllDocuments } from "yaml";
import {
  allSimulators,
  applePaths,
  findSimulator,
  installedApps,
  updateSimulator,
  timeScale as xcodeTimeScale,
} from "./apple-state.mjs";
import { allDevices, deviceSleep, paths, readJson, writeJson } from "./state.mjs";

const STEP_MS = 100;

function flowFiles(target) {
  if (!existsSync(target)) return { error: `Flow path does not exist: ${target}` };
  if (statSync(target).isFile()) return { files: [target] };
  const files = readdirSync(target)
    .filter((f) => /\.ya?ml$/.test(f) && f !== "config.yaml")
    .sort()
    .map((f) => join(target, f));
  return { files };
}

function escapeXml(text) {
  return String(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

function substitute(text, env) {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, key) => (key in env ? env[key] : whole));
}

async function runFlow(file, env, device) {
  const started = Date.now();
  const docs = parseAllDocuments(substitute(readFileSync(file, "utf8"), env)).map((d) => d.toJS());
  const config = docs.length > 1 ? (docs[0] ?? {}) : {};
  const commands = (docs.length > 1 ? docs[1] : docs[0]) ?? [];
  const name = config.name ?? basename(file, extname(file));
  const installed = device.installed();
  const runs = readJson(device.testRunsFile, {});
  const run = runs[`flow:${name}`] ?? 0;
  writeJson(device.testRunsFile, { ...runs, [`flow:${name}`]: run + 1 });
  for (const command of commands) {
    const [kind, arg] = typeof command === "string" ? [command, undefined] : Object.entries(command)[0];
    // A device that goes away during the command fails the flow with what maestro then says.
    const gone = await device.sleep(STEP_MS);
    if (gone) return { name, file, started, error: gone };
    if (kind === "launchApp") {
      const appId = typeof arg === "string" ? arg : (arg?.appId ?? config.appId);
      if (!installed[appId]) return { name, file, started, error: device.launchError(appId) };
    } else if (kind === "assertVisible") {
      const text = typeof arg === "string" ? arg : (arg?.text ?? "");
      const flaky = /^FAIL (\d+)x /.exec(text);
      if (flaky ? run < Number(flaky[1]) : text.startsWith("FAIL"))
        return { name, file, started, error: `Assertion is false: "${text}" is visible` };
    }
  }
  return { name, file, started };
}

function seconds(ms) {
  return (ms / 1000).toFixed(3);
}

function iso(ms) {
  return new Date(ms).toISOString().slice(0, 19);
}

/** An adb device in the `device` state, as maestro drives it. */
function androidDevice(d) {
  return {
    id: d.serial,
    // maestro's Device.description, which its JUnit report names the device by: the serial on Android.
    description: d.serial,
    installed: () => readJson(paths.packages(d.serial), {}),
    testRunsFile: paths.testRuns(d.serial),
    sleep: (ms) => deviceSleep(ms, d.serial),
    launchError: (appId) => `Unable to launch app ${appId}`,
  };
}

/** A Booted simulator of the Apple lab, as maestro drives it (through simctl and its XCTest runner). */
function simulator(s) {
  return {
    id: s.udid,
    // DeviceService: "${name} - ${runtime name} - ${udid}", the runtime's name as simctl lists it ("iOS 18.0").
    description: `${s.name} - iOS ${s.osVersion} - ${s.udid}`,
    installed: () => installedApps(s.udid),
    testRunsFile: applePaths.testRuns(s.udid),
    sleep: (ms) => simulatorWait(ms, s),
    // maestro launches with `xcrun simctl launch` and reports simctl's error as the command's failure
    // (recorded: mobile-dev-inc/Maestro#3614, maestro 2.x on an iOS 26.5 simulator).
    launchError: (appId) =>
      `An error was encountered processing the command (domain=FBSOpenApplicationServiceErrorDomain, code=4):\nSimulator device failed to launch ${appId}.`,
  };
}

/**
 * maestro's XCTest driver runs on the simulator and maestro talks to it over a local port (7001 for the first
 * shard in maestro's own logs); when it dies, each later command fails with okhttp's connect error (recorded:
 * mobile-dev-inc/Maestro#3318 and #3368, maestro 2.6, "CommandFailed: Failed to connect to /127.0.0.1:PORT").
 */
const DRIVER_GONE = "Failed to connect to /127.0.0.1:7001";

/**
 * Waits `ms` of the simulator's time, watching it as xcodebuild's stand-in does: a crash ordered by the lab
 * (lab.crash) takes it down now (Shutdown, one more crash), and a simulator no longer Booted has taken maestro's
 * driver with it. Returns the failure then, else null.
 */
async function simulatorWait(ms, s) {
  const until = Date.now() + (ms / (s.speed > 0 ? s.speed : 1)) * xcodeTimeScale();
  for (;;) {
    if (existsSync(applePaths.crash(s.udid))) {
      rmSync(applePaths.crash(s.udid), { force: true });
      updateSimulator(s.udid, { state: "Shutdown", crashes: (findSimulator(s.udid)?.crashes ?? 0) + 1 });
      return DRIVER_GONE;
    }
    if (findSimulator(s.udid)?.state !== "Booted") return DRIVER_GONE;
    const left = until - Date.now();
    if (left <= 0) return null;
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, 15)));
  }
}

/**
 * The devices maestro counts as connected (DeviceService.listConnectedDevices): adb's devices in the `device`
 * state, then the simulators that are Booted. A Shutdown simulator is only "available for launch", so
 * `--device` with its UDID is refused like an unknown id. Each lab is read only when its state dir is set.
 */
function connectedDevices() {
  const android = process.env.FAKE_ADB_STATE
    ? allDevices()
        .filter((d) => d.attached !== false && (d.state ?? "device") === "device")
        .map(androidDevice)
    : [];
  const simulators = process.env.FAKE_XCODE_STATE
    ? allSimulators()
        .filter((s) => s.isAvailable !== false && s.state === "Booted")
        .map(simulator)
    : [];
  return [...android, ...simulators];
}

export async function maestro(argv) {
  let serial;
  let args = argv;
  if (args[0] === "--device" || args[0] === "--udid") {
    serial = args[1];
    args = args.slice(2);
  }
  if (args[0] !== "test") {
    process.stderr.write(`stand-in maestro: unsupported: ${argv.join(" ")}\n`);
    return 1;
  }
  let format;
  let output;
  let target;
  const env = {};
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === "--format") format = args[++i];
    else if (a === "--output") output = args[++i];
    else if (a === "-e" || a === "--env") {
      const [key, ...value] = args[++i].split("=");
      env[key] = value.join("=");
    } else if (a === "--device" || a === "--udid") serial = args[++i];
    else if (a.startsWith("-")) {
      process.stderr.write(`stand-in maestro: unsupported: option ${a}\n`);
      return 1;
    } else target = a;
  }
  if (format !== undefined && format.toLowerCase() !== "junit") {
    process.stderr.write(`stand-in maestro: unsupported: --format ${format}\n`);
    return 1;
  }
  const ready = connectedDevices();
  // TestCommand checks each --device id against the connected ones as written (case counts).
  const device = serial === undefined ? ready[0] : ready.find((d) => d.id === serial);
  if (!device) {
    process.stderr.write(
      serial === undefined
        ? "No connected devices found\n"
        : `Device ${serial} was requested, but it is not connected.\n`,
    );
    return 1;
  }
  if (!target) {
    process.stderr.write("Missing required parameter: '<flowFiles>'\n");
    return 2;
  }
  const found = flowFiles(target);
  if (found.error) {
    process.stderr.write(`${found.error}\n`);
    return 1;
  }
  const suiteStarted = Date.now();
  const results = [];
  for (const file of found.files) {
    const result = await runFlow(file, env, device);
    result.ms = Date.now() - result.started;
    results.push(result);
    const status = result.error
      ? `[Failed] ${result.name} (${Math.round(result.ms / 1000)}s) (${result.error})`
      : `[Passed] ${result.name} (${Math.round(result.ms / 1000)}s)`;
    process.stdout.write(`${status}\n`);
  }
  const failed = results.filter((r) => r.error).length;
  process.stdout.write(
    failed > 0
      ? `\n${failed}/${results.length} ${failed === 1 ? "Flow" : "Flows"} Failed\n`
      : `\n${results.length}/${results.length} ${results.length === 1 ? "Flow" : "Flows"} Passed\n`,
  );
  if (output && format !== undefined) {
    const cases = results
      .map((r) => {
        const attrs = `id="${escapeXml(r.name)}" name="${escapeXml(r.name)}" classname="${escapeXml(r.name)}" file="${escapeXml(r.file)}" time="${seconds(r.ms)}" timestamp="${iso(r.started)}" status="${r.error ? "ERROR" : "SUCCESS"}"`;
        return r.error
          ? `    <testcase ${attrs}>\n      <failure>${escapeXml(r.error)}</failure>\n    </testcase>`
          : `    <testcase ${attrs}/>`;
      })
      .join("\n");
    writeFileSync(
      output,
      `<?xml version='1.0' encoding='UTF-8'?>\n<testsuites>\n  <testsuite name="Test Suite" device="${escapeXml(device.description)}" tests="${results.length}" failures="${failed}" time="${seconds(Date.now() - suiteStarted)}" timestamp="${iso(suiteStarted)}">\n${cases}\n  </testsuite>\n</testsuites>\n`,
    );
  }
  return failed > 0 ? 1 : 0;
}
