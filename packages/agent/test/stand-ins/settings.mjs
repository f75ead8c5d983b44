// The device settings and properties the agent changes before a run (API.md §14): `settings put|get|delete system
// KEY [VALUE]` (the settings provider: `get` of an unset key prints "null"), `setprop KEY VALUE` and
// `getprop` of what was set. Locale on an emulator: `setprop persist.sys.locale TAG` (writable by the shell on
// an emulator image, as after `adb root`) then `setprop ctl.restart zygote`: the framework restarts, so for a
// while (FRAMEWORK_RESTART_MS of device time) `sys.boot_completed` reads empty and `pm` cannot reach the
// package service; after it, the locale is the new one. On a physical device (a serial not `emulator-…`, no
// emulator record) persist.* and ctl.* are refused as on a user build: "setprop: Failed to set property 'K'
// to 'V'. See dmesg for error reason." (toybox setprop.c's error_exit, read from memory of the source), exit 1.
import { paths, readJson, writeJson } from "./state.mjs";

/** How many reads of sys.boot_completed the framework's restart lasts. */
export const RESTART_LOOKS = 2;

function file(serial) {
  return `${paths.device(serial)}/settings.json`;
}

export function deviceSettings(serial) {
  return readJson(file(serial), { system: {}, props: {}, restartLooksLeft: 0, restarts: 0 });
}

function save(serial, state) {
  writeJson(file(serial), state);
}

export function restarting(serial) {
  return deviceSettings(serial).restartLooksLeft > 0;
}

function isEmulator(device) {
  return device.serial.startsWith("emulator-") || device.emulator !== undefined;
}

export function settings(device, words) {
  const [verb, namespace, key, value] = words;
  if (!["system", "secure", "global"].includes(namespace) || key === undefined) {
    process.stderr.write(`stand-in adb: unsupported: settings ${words.join(" ")}\n`);
    return 1;
  }
  const state = deviceSettings(device.serial);
  state[namespace] ??= {};
  const space = state[namespace];
  if (verb === "put" && value !== undefined) {
    space[key] = value;
    save(device.serial, state);
    return 0;
  }
  // SettingsService's `delete`: how many rows went (1, or 0 for a key never set).
  if (verb === "delete") {
    const had = key in space;
    delete space[key];
    save(device.serial, state);
    process.stdout.write(`Deleted ${had ? 1 : 0} rows\n`);
    return 0;
  }
  if (verb === "get") {
    process.stdout.write(`${space[key] ?? "null"}\n`);
    return 0;
  }
  process.stderr.write(`stand-in adb: unsupported: settings ${words.join(" ")}\n`);
  return 1;
}

export function setprop(device, words) {
  const [key, value] = words;
  if (key === undefined || value === undefined) {
    process.stderr.write("setprop: Need 2 arguments\n");
    return 1;
  }
  if (
    !isEmulator(device) &&
    (key.startsWith("persist.") || key.startsWith("ctl.") || key.startsWith("ro."))
  ) {
    process.stderr.write(
      `setprop: Failed to set property '${key}' to '${value}'. See dmesg for error reason.\n`,
    );
    return 1;
  }
  const state = deviceSettings(device.serial);
  if (key === "ctl.restart" && value === "zygote") {
    state.restartLooksLeft = RESTART_LOOKS;
    state.restarts = (state.restarts ?? 0) + 1;
  } else {
    state.props[key] = value;
  }
  save(device.serial, state);
  return 0;
}

/** What getprop reads on top of the device's own properties; `key`: the one property read, if one. */
export function setProps(serial, key) {
  const state = deviceSettings(serial);
  if (state.restartLooksLeft > 0 && key === "sys.boot_completed") {
    state.restartLooksLeft -= 1;
    save(serial, state);
    return { ...state.props, "sys.boot_completed": "" };
  }
  return { ...state.props, ...(state.restartLooksLeft > 0 ? { "sys.boot_completed": "" } : {}) };
}
