// `xcrun simctl …`: the simulators of the lab, the device types and runtimes it can make more of (`create`,
// `delete`), their state (Shutdown → Booted → Shutdown, a boot that fails on the lab's cue), their installed
// apps, their log and their screen. Texts: CoreSimulator's errors as recorded in public issues and logs
// (../fixtures/apple/SOURCES.md); the JSON layout of `list devices --json` as in
// ../fixtures/apple/simctl-list-devices-booted.json.

import { randomUUID } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import {
  allSimulators,
  appendLine,
  applePaths,
  BOOT_MS,
  findSimulator,
  installedApps,
  readJson,
  setInstalledApps,
  timeScale,
  updateSimulator,
  writeJson,
} from "./apple-state.mjs";
import { png } from "./screencap.mjs";
import { moov } from "./screenrecord.mjs";
import {
  deviceTypes,
  findDeviceType,
  findRuntime,
  listedDeviceType,
  listedRuntime,
  newestRuntimeFor,
  runtimes,
} from "./xc-catalog.mjs";
import { appleJson, coreSimulatorError, readAppBundle, stateError, unsupported } from "./xc-common.mjs";
import { followLog } from "./xc-log.mjs";

function invalidDevice(id) {
  // Recorded with its exit status 148 (diglol/crypto#29: "Invalid device: Apple Watch Series 5 - 44mm").
  process.stderr.write(`Invalid device: ${id}\n`);
  return 148;
}

function dataPath(udid) {
  return `/Users/testbay/Library/Developer/CoreSimulator/Devices/${udid}/data`;
}

/** One simulator as `list devices --json` prints it, keys in simctl's order. */
function listed(sim) {
  return {
    ...(sim.lastBootedAt ? { lastBootedAt: sim.lastBootedAt } : {}),
    dataPath: dataPath(sim.udid),
    dataPathSize: 1620578304,
    logPath: `/Users/testbay/Library/Logs/CoreSimulator/${sim.udid}`,
    udid: sim.udid,
    isAvailable: sim.isAvailable !== false,
    ...(sim.isAvailable === false ? { availabilityError: "runtime profile not found" } : {}),
    logPathSize: 9740288,
    deviceTypeIdentifier: sim.deviceTypeIdentifier,
    state: sim.state,
    name: sim.name,
  };
}

function list(args) {
  const json = args.includes("-j") || args.includes("--json");
  const words = args.filter((a) => !a.startsWith("-"));
  const section = ["devices", "runtimes", "devicetypes", "pairs"].includes(words[0])
    ? words.shift()
    : undefined;
  if (section === "pairs") return unsupported("xcrun", "simctl list pairs");
  const types = deviceTypes();
  const installedRuntimes = runtimes();
  let simulators = allSimulators();
  for (const word of words) {
    if (word === "available") simulators = simulators.filter((s) => s.isAvailable !== false);
    else if (word === "booted") simulators = simulators.filter((s) => s.state === "Booted");
    else {
      const term = word.toLowerCase();
      simulators = simulators.filter(
        (s) =>
          s.name.toLowerCase().includes(term) ||
          s.udid.toLowerCase() === term ||
          s.runtime.toLowerCase().includes(term),
      );
    }
  }
  // Every installed runtime is a key, with no simulators too (the recorded `[\n\n    ]`).
  const byRuntime = {};
  for (const runtime of installedRuntimes) byRuntime[runtime.identifier] = [];
  for (const runtime of new Set(allSimulators().map((s) => s.runtime))) byRuntime[runtime] ??= [];
  for (const sim of simulators) byRuntime[sim.runtime].push(listed(sim));
  if (json) {
    const doc = {};
    if (!section || section === "devicetypes") doc.devicetypes = types.map(listedDeviceType);
    if (!section || section === "runtimes") doc.runtimes = installedRuntimes.map(listedRuntime);
    if (!section || section === "devices") doc.devices = byRuntime;
    if (!section) doc.pairs = {};
    process.stdout.write(appleJson(doc, { escapeSlashes: true }));
    return 0;
  }
  let text = "";
  if (!section || section === "devicetypes") {
    text += "== Device Types ==\n";
    for (const t of types) text += `${t.name} (${t.identifier})\n`;
  }
  if (!section || section === "runtimes") {
    text += "== Runtimes ==\n";
    for (const r of installedRuntimes)
      text += `iOS ${r.version} (${r.version} - ${r.buildversion}) - ${r.identifier}\n`;
  }
  if (!section || section === "devices") {
    text += "== Devices ==\n";
    for (const [runtime, sims] of Object.entries(byRuntime)) {
      const m = /SimRuntime\.(\w+)-(\d+)-(\d+)/.exec(runtime);
      text += `-- ${m ? `${m[1]} ${m[2]}.${m[3]}` : runtime} --\n`;
      for (const s of sims) text += `    ${s.name} (${s.udid}) (${s.state})\n`;
    }
  }
  process.stdout.write(text);
  return 0;
}

/**
 * `create NAME DEVICE_TYPE [RUNTIME]`: a new Shutdown simulator, its UDID on stdout. Refusals as recorded: an
 * unknown device type (`Invalid device type: X`, exit 146: dotnet/xharness#1042), an unknown runtime (`Invalid
 * runtime: X`, recorded without its exit status), a runtime that does not support the device type (`Unable to
 * create a device for device type: …`, SimError 403: Kotlin/Storytale#80).
 */
function create(args) {
  const [name, typeGiven, runtimeGiven] = args;
  if (!name || !typeGiven) {
    process.stderr.write(
      "Create a new device.\nUsage: simctl create <name> <device type id> [<runtime id>]\n",
    );
    return 64;
  }
  const type = findDeviceType(typeGiven);
  if (!type) {
    process.stderr.write(`Invalid device type: ${typeGiven}\n`);
    return 146;
  }
  const runtime = runtimeGiven === undefined ? newestRuntimeFor(type) : findRuntime(runtimeGiven);
  if (!runtime) {
    process.stderr.write(`Invalid runtime: ${runtimeGiven ?? "(none supports this device type)"}\n`);
    return 146;
  }
  if (!runtime.supportedDeviceTypes.includes(type.identifier)) {
    process.stderr.write(
      `Unable to create a device for device type: ${type.name} (${type.identifier}), runtime: iOS ${runtime.version} (${runtime.version} - ${runtime.buildversion}) - ${runtime.identifier}\n`,
    );
    process.stderr.write(
      "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=403):\n",
    );
    return 403 & 0xff;
  }
  const udid = randomUUID().toUpperCase();
  const created = findSimulatorPolicy(name);
  writeJson(applePaths.created(udid), {
    udid,
    name,
    runtime: runtime.identifier,
    deviceTypeIdentifier: type.identifier,
    osVersion: runtime.version,
    isAvailable: true,
    speed: 1,
    state: "Shutdown",
    createdAt: Date.now(),
    ...created,
  });
  process.stdout.write(`${udid}\n`);
  return 0;
}

/** What the lab set for simulators created under a name (lab.onCreate): e.g. one that never boots. */
function findSimulatorPolicy(name) {
  const policies = readJson(applePaths.createPolicies(), {});
  return policies[name] ?? {};
}

/**
 * A simulator the lab made fail to boot (lab.failBoot, or created under a name lab.onCreate marked): simctl's
 * recorded failure when launchd_sim does not come up (futureware-tech/simulator-action#301), exit 60. It stays
 * Shutdown. `bootFailures` counts the boots left to fail (-1: every one).
 */
function failsToBoot(sim) {
  const left = sim.bootFailures ?? 0;
  if (left === 0) return false;
  updateSimulator(sim.udid, {
    bootFailures: left > 0 ? left - 1 : left,
    failedBoots: (sim.failedBoots ?? 0) + 1,
  });
  process.stderr.write(
    "An error was encountered processing the command (domain=NSPOSIXErrorDomain, code=60):\n" +
      "Unable to boot the Simulator.\nlaunchd failed to respond.\n" +
      "Underlying error (domain=com.apple.SimLaunchHostService.RequestError, code=4):\n" +
      "\tFailed to start launchd_sim: could not bind to session, launchd_sim may have crashed or quit responding\n",
  );
  return true;
}

function boot(sim) {
  const now = Date.now();
  return updateSimulator(sim.udid, {
    state: "Booted",
    readyAt: now + (BOOT_MS / (sim.speed ?? 1)) * timeScale(),
    lastBootedAt: new Date(now).toISOString().replace(/\.\d+Z$/, "Z"),
  });
}

function stamp(date) {
  const p = (n) => String(n).padStart(2, "0");
  return `${date.getUTCFullYear()}-${p(date.getUTCMonth() + 1)}-${p(date.getUTCDate())} ${p(date.getUTCHours())}:${p(
    date.getUTCMinutes(),
  )}:${p(date.getUTCSeconds())} +0000`;
}

/** `bootstatus UDID [-b]`: waits until the simulator has finished booting (-b boots it first). */
async function bootstatus(sim, args) {
  process.stdout.write(`Monitoring boot status for ${sim.name} (${sim.udid}).\n`);
  if (sim.state === "Booted" && (sim.readyAt ?? 0) <= Date.now()) {
    process.stdout.write("Device already booted, nothing to do.\n");
    return 0;
  }
  if (sim.state === "Shutdown" && args.includes("-b")) {
    if (failsToBoot(sim)) return 60;
    boot(sim);
  }
  const started = Date.now();
  let waiting = false;
  for (;;) {
    const now = findSimulator(sim.udid);
    if (!now) return invalidDevice(sim.udid);
    if (now.state === "Booted" && (now.readyAt ?? 0) <= Date.now()) break;
    if (now.state === "Booted" && !waiting) {
      waiting = true;
      const elapsed = Math.round((Date.now() - started) / 1000);
      process.stdout.write(
        `[${stamp(new Date())}] Status=4, isTerminal=NO, Elapsed=00:${String(elapsed).padStart(2, "0")}.\n\tWaiting on System App\n\n`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  const elapsed = Math.round((Date.now() - started) / 1000);
  process.stdout.write(
    `[${stamp(new Date())}] Status=4294967295, isTerminal=YES, Elapsed=00:${String(elapsed).padStart(2, "0")}.\n\tFinished\n\n`,
  );
  return 0;
}

function install(sim, path) {
  if (sim.state !== "Booted") return stateError("lookup", sim.state);
  const app = readAppBundle(path);
  if (app.error === "not-found") {
    return coreSimulatorError("NSPOSIXErrorDomain", 2, [
      "Failed to install the requested application",
      "An application bundle was not found at the provided path.",
      "Provide a valid path to the desired application bundle.",
    ]);
  }
  if (app.error) {
    return coreSimulatorError("NSPOSIXErrorDomain", 22, [
      "Failed to install the requested application",
      "The bundle identifier of the application could not be determined.",
      "Ensure that the application's Info.plist contains a value for CFBundleIdentifier.",
    ]);
  }
  const apps = installedApps(sim.udid);
  appendLine(
    applePaths.installs(sim.udid),
    JSON.stringify({ at: Date.now(), bundleId: app.bundleId, alreadyInstalled: Object.keys(apps).sort() }),
  );
  const before = apps[app.bundleId];
  apps[app.bundleId] = {
    bundleId: app.bundleId,
    name: app.name,
    version: app.version,
    build: app.build,
    path: app.path,
    installs: (before?.installs ?? 0) + 1,
    installedBy: "simctl",
    installedAt: Date.now(),
  };
  setInstalledApps(sim.udid, apps);
  return 0;
}

function running(udid) {
  return readJson(`${applePaths.target(udid)}/running.json`, {});
}

function launch(sim, bundleId) {
  if (sim.state !== "Booted") return stateError("lookup", sim.state);
  if (!installedApps(sim.udid)[bundleId]) {
    // Wording recalled from FrontBoard's error, not checked against a recording.
    return coreSimulatorError("FBSOpenApplicationServiceErrorDomain", 4, [
      `The request to open "${bundleId}" failed.`,
      `The operation couldn’t be completed. Application info provider (FBSApplicationLibrary) returned nil for "${bundleId}"`,
    ]);
  }
  const pid = 40000 + Math.floor(Math.random() * 9999);
  writeJson(`${applePaths.target(sim.udid)}/running.json`, { ...running(sim.udid), [bundleId]: pid });
  process.stdout.write(`${bundleId}: ${pid}\n`);
  return 0;
}

function terminate(sim, bundleId) {
  if (sim.state !== "Booted") return stateError("lookup", sim.state);
  const now = running(sim.udid);
  if (!now[bundleId])
    return coreSimulatorError("com.apple.CoreSimulator.SimError", 164, ["found nothing to terminate"]);
  delete now[bundleId];
  writeJson(`${applePaths.target(sim.udid)}/running.json`, now);
  return 0;
}

/** Waits for SIGINT (finalises) or the simulator shutting down (the file keeps no moov, as a killed recorder's). */
function recordVideo(sim, args) {
  if (sim.state !== "Booted") return Promise.resolve(stateError("lookup", sim.state));
  let force = false;
  let file;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--force" || a === "-f") force = true;
    else if (a.startsWith("--codec=") || a.startsWith("--display=") || a.startsWith("--mask=")) {
      const value = a.split("=")[1];
      if (a.startsWith("--codec=") && !["h264", "hevc"].includes(value)) {
        return Promise.resolve(unsupported("xcrun", `recordVideo codec ${value}`));
      }
    } else if (a === "--codec" || a === "-c" || a === "--display" || a === "--mask") i++;
    else if (a.startsWith("-")) return Promise.resolve(unsupported("xcrun", `recordVideo option ${a}`));
    else file = a;
  }
  if (!file) return Promise.resolve(unsupported("xcrun", "recordVideo without a file"));
  if (existsSync(file) && !force) {
    // The real refusal text was not found in a recording; --force is what every caller passes.
    process.stderr.write(`Error: the file ${file} already exists (use --force to overwrite)\n`);
    return Promise.resolve(1);
  }
  mkdirSync(dirname(file), { recursive: true });
  const part = `${file}.${process.pid}.part`;
  const fd = openSync(part, "w");
  // QuickTime: ftyp "qt  ", then mdat written while recording, moov only at a clean stop.
  writeSync(
    fd,
    Buffer.concat([u32(20), Buffer.from("ftypqt  ", "latin1"), u32(0x200), Buffer.from("qt  ", "latin1")]),
  );
  writeSync(fd, Buffer.from([0, 0, 0, 0, 0x6d, 0x64, 0x61, 0x74]));
  renameSync(part, file);
  const started = Date.now();
  let mdat = 8;
  return new Promise((resolve) => {
    process.once("SIGINT", () => {
      clearInterval(writer);
      clearInterval(watcher);
      process.stdout.write("Recording completed. Writing to disk.\n");
      const size = Buffer.alloc(4);
      size.writeUInt32BE(mdat, 0);
      writeSync(fd, size, 0, 4, 20);
      const tail = moov(Date.now() - started);
      writeSync(fd, tail, 0, tail.length, 20 + mdat);
      closeSync(fd);
      process.stdout.write(`\nWrote video to: ${file}\n`);
      resolve(0);
    });
    // Announced only once SIGINT is handled: a caller that stops the recording on this line finds it finalised.
    process.stdout.write("Recording started\n");
    const writer = setInterval(() => {
      writeSync(fd, Buffer.alloc(256, 0x33));
      mdat += 256;
    }, 40);
    const watcher = setInterval(() => {
      if (findSimulator(sim.udid)?.state !== "Booted") {
        clearInterval(writer);
        clearInterval(watcher);
        closeSync(fd);
        process.stderr.write("Error: the simulator shut down during the recording\n");
        resolve(1);
      }
    }, 15);
  });
}

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

function screenshot(sim, args) {
  if (sim.state !== "Booted") return stateError("lookup", sim.state);
  const file = args.filter((a) => !a.startsWith("-")).at(-1);
  if (!file) return unsupported("xcrun", "screenshot without a file");
  mkdirSync(dirname(file), { recursive: true });
  const [w, h] = sim.screen ?? [1179, 2556];
  writeFileSync(
    file,
    png(Math.max(1, Math.round(w / 9)), Math.max(1, Math.round(h / 9)), sim.screenColor ?? [20, 90, 200]),
  );
  process.stderr.write(`Detected file type 'PNG' from extension\nWrote screenshot to: ${file}\n`);
  return 0;
}

function erase(sim) {
  if (sim.state !== "Shutdown") return stateError("erase contents and settings", sim.state);
  setInstalledApps(sim.udid, {});
  writeJson(`${applePaths.target(sim.udid)}/running.json`, {});
  writeFileSync(applePaths.log(sim.udid), "");
  updateSimulator(sim.udid, { erased: (sim.erased ?? 0) + 1 });
  return 0;
}

function targets(id) {
  if (id === "all") return allSimulators();
  if (id === "booted") return allSimulators().filter((s) => s.state === "Booted");
  const sim = findSimulator(id) ?? allSimulators().find((s) => s.name === id);
  return sim ? [sim] : [];
}

/**
 * CoreSimulatorService gone (crashed, or out of reach of a sandboxed process): simctl says so and does nothing.
 * The two lines as published in captures of `xcrun simctl list devices` and xcodebuild logs; the exit status was
 * not recorded with them (1 here).
 */
function coreSimulatorDown() {
  const invalid =
    "CoreSimulatorService connection became invalid.  Simulator services will no longer be available.";
  process.stderr.write(
    `${invalid}\nUnable to locate device set: Error Domain=NSPOSIXErrorDomain Code=61 "Connection refused" ` +
      `UserInfo={NSLocalizedDescription=${invalid}}\n`,
  );
  return 1;
}

export async function simctl(args) {
  if (existsSync(applePaths.coreSimulatorDown())) return coreSimulatorDown();
  const [command, id, ...rest] = args;
  if (command === "list") return list(args.slice(1));
  if (command === "create") return create(args.slice(1));
  const needsDevice = [
    "boot",
    "bootstatus",
    "shutdown",
    "erase",
    "install",
    "uninstall",
    "launch",
    "terminate",
    "spawn",
    "io",
    "delete",
  ];
  if (!needsDevice.includes(command)) return unsupported("xcrun", `simctl ${command ?? ""}`.trim());
  const found = targets(id ?? "");
  if (found.length === 0) return invalidDevice(id ?? "");
  if (command === "shutdown") {
    if (id !== "all" && found[0].state === "Shutdown") return stateError("shutdown device", "Shutdown");
    for (const sim of found) updateSimulator(sim.udid, { state: "Shutdown", readyAt: null });
    return 0;
  }
  if (command === "delete") {
    // A booted simulator is shut down first, as simctl does; its files go with it.
    for (const sim of found) updateSimulator(sim.udid, { state: "Shutdown", readyAt: null, deleted: true });
    return 0;
  }
  if (command === "erase") {
    let code = 0;
    for (const sim of found) code = erase(sim) || code;
    return code;
  }
  const sim = found[0];
  switch (command) {
    case "boot":
      if (sim.state !== "Shutdown") return stateError("boot device", sim.state);
      if (failsToBoot(sim)) return 60;
      boot(sim);
      return 0;
    case "bootstatus":
      return bootstatus(sim, rest);
    case "install":
      return install(sim, rest[0]);
    case "uninstall": {
      if (sim.state !== "Booted") return stateError("lookup", sim.state);
      const apps = installedApps(sim.udid);
      delete apps[rest[0]];
      setInstalledApps(sim.udid, apps);
      return 0;
    }
    case "launch":
      return launch(sim, rest.filter((a) => !a.startsWith("-"))[0]);
    case "terminate":
      return terminate(sim, rest[0]);
    case "spawn":
      if (rest[0] === "log" && rest[1] === "stream") return followLog(sim, rest.slice(2));
      return unsupported("xcrun", `simctl spawn ${rest.join(" ")}`);
    case "io":
      if (rest[0] === "recordVideo") return recordVideo(sim, rest.slice(1));
      if (rest[0] === "screenshot") return screenshot(sim, rest.slice(1));
      return unsupported("xcrun", `simctl io ${rest[0] ?? ""}`);
  }
  return 1;
}
