// Stand-in for the Android emulator (`emulator -avd NAME -port P …`): one process per instance, as the real one,
// which puts a device emulator-P into the adb lab, boots it (offline, then device, then sys.boot_completed=1),
// keeps it until it is killed (SIGTERM, SIGINT, `adb emu kill`) or crashes on cue, and takes it away again.
// Behaviour and texts: the emulator's command-line documentation (developer.android.com/studio/run/emulator-
// commandline: -avd, -port, -no-window, -no-audio, -no-boot-anim, -read-only, -snapshot, -no-snapshot-load,
// -no-snapshot-save, -wipe-data, -list-avds) and its output as recorded in public issues (see ../README.md).
import { appendFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import {
  alive,
  avdPaths,
  avds,
  instance,
  keepDevice,
  restoreDevice,
  updateDevices,
  writeJson,
} from "./avd-state.mjs";
import { allDevices, readJson, timeScale } from "./state.mjs";

const VERSION = "INFO    | Android emulator version 33.1.24.0 (build_id 11237101) (CL:N/A)";

function out(line) {
  process.stdout.write(`${line}\n`);
}
function err(line) {
  process.stderr.write(`${line}\n`);
}
function record(entry) {
  mkdirSync(dirname(avdPaths.launches()), { recursive: true });
  appendFileSync(avdPaths.launches(), `${JSON.stringify({ ...entry, at: Date.now() })}\n`);
}

const FLAGS = new Set([
  "-no-window",
  "-no-audio",
  "-noaudio",
  "-no-boot-anim",
  "-read-only",
  "-no-snapshot-save",
  "-no-snapshot-load",
  "-no-snapshot",
  "-wipe-data",
  "-list-avds",
]);
const WITH_VALUE = new Set(["-avd", "-port", "-snapshot", "-gpu"]);

function parse(argv) {
  const options = { flags: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("@")) options.avd = a.slice(1);
    else if (FLAGS.has(a)) options.flags.add(a);
    else if (WITH_VALUE.has(a)) options[a.slice(1)] = argv[++i];
    else {
      // The real emulator's message for an option it does not know (android/main-common.c).
      err(`emulator: ERROR: unknown option: ${a}`);
      err("please use -help for a list of valid options");
      process.exit(1);
    }
  }
  return options;
}

const sleep = (deviceMs) => new Promise((resolve) => setTimeout(resolve, deviceMs * timeScale()));

export async function emulator(argv) {
  const options = parse(argv);
  const known = avds();
  if (options.flags.has("-list-avds")) {
    for (const name of Object.keys(known)) out(name);
    return 0;
  }
  const name = options.avd;
  const avd = name === undefined ? undefined : known[name];
  if (!avd) {
    // Recorded (ashishb/androidtool#43): the refusal and the two lines after it.
    err(`emulator: ERROR: Unknown AVD name [${name ?? ""}], use -list-avds to see valid list.`);
    err(`HOME is defined but there is no file ${name ?? ""}.ini in $HOME/.android/avd`);
    err(
      "(Note: Directories are searched in the order $ANDROID_AVD_HOME, $ANDROID_SDK_HOME/avd and $HOME/.android/avd)",
    );
    return 1;
  }
  const port = Number(options.port ?? 5554);
  // -port: an even number from 5554 to 5682 (the console; adb's port is the next one).
  if (!Number.isInteger(port) || port < 5554 || port > 5682 || port % 2 !== 0) {
    err(`emulator: ERROR: Invalid -port value: ${options.port}`);
    return 1;
  }
  const serial = `emulator-${port}`;
  const readOnly = options.flags.has("-read-only");
  out(VERSION);
  out(
    `INFO    | Found systemPath /opt/android-sdk/system-images/android-${avd.sdk}/${avd.tag}/${avd.abis[0]}/`,
  );
  const running = allDevices().filter((d) => d.emulator && d.attached !== false && alive(d.emulator.pid));
  if (!readOnly && running.some((d) => d.emulator.avd === name)) {
    // Recorded with this split over three lines (VKCOM/docker-emulator-android#4, uutils/coreutils#5917).
    err("ERROR   | Running multiple emulators with the same AVD ");
    err("ERROR   | is an experimental feature.");
    err("ERROR   | Please use -read-only flag to enable this feature.");
    return 1;
  }
  if (running.some((d) => d.serial === serial)) {
    // Not recorded: the stand-in's own wording for a console port another instance holds.
    err(`ERROR   | Port ${port} is already used by another emulator instance.`);
    return 1;
  }
  record({ avd: name, port, pid: process.pid, argv });

  // What the instance starts with: nothing after -wipe-data, the named snapshot when it exists, else the AVD's
  // userdata (what the last writable instance left, its quick-boot state).
  let bootMs = avd.bootMs;
  let from = avdPaths.userdata(name);
  if (options.flags.has("-wipe-data")) {
    from = null;
    if (!readOnly) rmSync(avdPaths.userdata(name), { recursive: true, force: true });
  } else if (options.snapshot !== undefined && !options.flags.has("-no-snapshot-load")) {
    const snapshot = avdPaths.snapshot(name, options.snapshot);
    if (existsSync(snapshot)) {
      out(`INFO    | Loading snapshot '${options.snapshot}'...`);
      from = snapshot;
      bootMs = avd.snapshotLoadMs;
    } else {
      // Recorded (ReactiveCircus/android-emulator-runner#432) for a snapshot the AVD does not have.
      err(`WARNING | Device 'cache' does not have the requested snapshot '${options.snapshot}'`);
      err(`WARNING | Failed to load snapshot '${options.snapshot}'`);
    }
  }
  restoreDevice(serial, from);
  rmSync(avdPaths.crashRequest(serial), { force: true });
  const spec = {
    serial,
    model: avd.model,
    manufacturer: "Google",
    release: avd.release,
    sdk: avd.sdk,
    abis: avd.abis,
    state: "offline",
    product: avd.product,
    device: avd.device,
    screen: avd.screen,
    speed: 1,
    attached: true,
    bootCompleted: false,
    emulator: { avd: name, pid: process.pid, port, readOnly, snapshot: options.snapshot ?? null },
  };
  updateDevices((devices) => {
    const transportId = Math.max(0, ...devices.map((d) => d.transportId ?? 0)) + 1;
    return [...devices.filter((d) => d.serial !== serial), { ...spec, transportId }];
  });

  let ending = false;
  const leave = (code, lines = []) => {
    if (ending) return;
    ending = true;
    for (const line of lines) err(line);
    updateDevices((devices) =>
      devices.filter((d) => !(d.serial === serial && d.emulator?.pid === process.pid)),
    );
    record({ port, pid: process.pid, exit: code });
    process.exit(code);
  };
  const started = Date.now();
  const stop = () => {
    if (
      !readOnly &&
      !options.flags.has("-no-snapshot-save") &&
      instance(serial)?.emulator.pid === process.pid
    ) {
      // Recorded in this form by older emulators ("emulator: Saving state on exit with session uptime 15645 ms").
      out(`INFO    | Saving state on exit with session uptime ${Date.now() - started} ms`);
      keepDevice(serial, avdPaths.userdata(name));
    }
    leave(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // `adb emu kill` asks through the lab; a crash on cue (lab.crashEmulator) too. Polled, as the adb stand-in polls.
  setInterval(() => {
    const me = instance(serial);
    if (existsSync(avdPaths.crashRequest(serial))) {
      rmSync(avdPaths.crashRequest(serial), { force: true });
      // Not recorded: a crash on cue is the lab's; the exit status is that of a process killed by SIGSEGV.
      leave(139, ["FATAL   | stand-in: the emulator crashed (lab.crashEmulator)"]);
    } else if (!me || me.emulator.pid !== process.pid) {
      // The lab took its device away (a suite's vanishAfterTests, lab.unplug): the instance is gone with it.
      leave(139, ["FATAL   | stand-in: the emulator's device vanished"]);
    } else if (me.emulator.killRequested) stop();
  }, 15);

  const failing = readJson(avdPaths.failBoots(name), null);
  if (failing && failing.count > 0) {
    writeJson(avdPaths.failBoots(name), { ...failing, count: failing.count - 1 });
    if (failing.mode === "exit") {
      await sleep(Math.min(bootMs, 2000));
      // Recorded (DitchOoM/buffer#192, DigiRL-agent/digirl#53): a boot that gives up on a pending snapshot.
      leave(1, [
        `FATAL   | A snapshot operation for '${name}' is pending and timeout has expired. Exiting...`,
      ]);
      return new Promise(() => {});
    }
    // "hang": adbd never comes up; the device stays offline until someone kills the instance.
    out("INFO    | Increasing RAM size to 2048MB");
    return new Promise(() => {});
  }
  // adbd answers after about a quarter of the boot (offline until then), sys.boot_completed at its end.
  await sleep(bootMs / 4);
  updateDevices((devices) => devices.map((d) => (d.serial === serial ? { ...d, state: "device" } : d)));
  await sleep((bootMs * 3) / 4);
  updateDevices((devices) => devices.map((d) => (d.serial === serial ? { ...d, bootCompleted: true } : d)));
  out(`INFO    | Boot completed in ${Date.now() - started} ms`);
  return new Promise(() => {});
}

/** `adb -s emulator-P emu …`: the emulator console's commands the agent uses. Returns the exit code. */
export async function console_(serial, words) {
  const me = instance(serial);
  if (!me) {
    process.stderr.write(`adb: device '${serial}' not found\n`);
    return 1;
  }
  const [command, ...rest] = words;
  if (command === "kill") {
    // Console reply as printed by adb emu (android/console.cpp do_kill).
    process.stdout.write("OK: killing emulator, bye bye\nOK\n");
    updateDevices((devices) =>
      devices.map((d) =>
        d.serial === serial ? { ...d, emulator: { ...d.emulator, killRequested: true } } : d,
      ),
    );
    return 0;
  }
  if (command === "avd" && rest[0] === "name") {
    process.stdout.write(`${me.emulator.avd}\nOK\n`);
    return 0;
  }
  if (
    command === "avd" &&
    rest[0] === "snapshot" &&
    ["save", "load", "delete"].includes(rest[1]) &&
    rest[2]
  ) {
    // The console answers KO and adb emu still exits 0: callers read the reply (see ../README.md).
    if (me.emulator.readOnly) {
      process.stdout.write(`KO: Snapshot ${rest[1]} is not supported in read-only mode (-read-only)\n`);
      return 0;
    }
    const snapshot = avdPaths.snapshot(me.emulator.avd, rest[2]);
    if (rest[1] === "save") {
      await new Promise((resolve) => setTimeout(resolve, 500 * timeScale()));
      keepDevice(serial, snapshot);
    } else if (!existsSync(snapshot)) {
      process.stdout.write(`KO: snapshot '${rest[2]}' does not exist\n`);
      return 0;
    } else if (rest[1] === "load") {
      await new Promise((resolve) =>
        setTimeout(resolve, avds()[me.emulator.avd].snapshotLoadMs * timeScale()),
      );
      restoreDevice(serial, snapshot);
    } else {
      rmSync(snapshot, { recursive: true, force: true });
    }
    process.stdout.write("OK\n");
    return 0;
  }
  process.stdout.write(`KO: unknown command, try 'help'\n`);
  return 0;
}

/** `avdmanager list avd`: the layout of avdmanager's AvdManagerCli (labels right-aligned, entries split by dashes). */
export function avdmanager(argv) {
  if (argv[0] !== "list" || (argv[1] !== "avd" && argv[1] !== undefined)) {
    process.stderr.write(`stand-in avdmanager: unsupported: ${argv.join(" ")}\n`);
    return 1;
  }
  const home = process.env.HOME ?? "/home/user";
  const entries = Object.values(avds()).map((avd) =>
    [
      `    Name: ${avd.name}`,
      `  Device: ${avd.hardware} (Google)`,
      `    Path: ${home}/.android/avd/${avd.name}.avd`,
      `  Target: ${avd.tag === "google_apis" ? "Google APIs (Google Inc.)" : "Default Android System Image"}`,
      `          Based on: Android ${avd.release}.0 Tag/ABI: ${avd.tag}/${avd.abis[0]}`,
      "  Sdcard: 512 MB",
    ].join("\n"),
  );
  process.stdout.write(`Available Android Virtual Devices:\n${entries.join("\n---------\n")}\n`);
  return 0;
}
