// What the Apple stand-ins share: JSON in the layout Apple's tools print (Foundation's pretty printer: two
// spaces, " : " between key and value, empty arrays as "[\n\n  ]", and for simctl `\/` for every slash), the
// bundles they install (an .app directory whose Info.plist names CFBundleIdentifier), and CoreSimulator's
// error form "An error was encountered processing the command (domain=…, code=N):\n…" whose exit status is
// the code's low byte (405 → 149, 164 → 164: recorded in public issues, see ../fixtures/apple/SOURCES.md).
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parsePlist } from "./xc-plist.mjs";

/** Apple's pretty JSON. `escapeSlashes`: simctl (NSJSONSerialization) writes "\/"; xcresulttool does not. */
export function appleJson(value, { escapeSlashes = false } = {}) {
  let text = JSON.stringify(value, null, 2)
    // "key": → "key" : at the start of a line (keys are always first on their line in this layout).
    .replace(/^(\s*"(?:[^"\\]|\\.)*"):/gm, "$1 :")
    .replace(
      /^(\s*)(.*)\[\](,?)$/gm,
      (_, indent, before, comma) => `${indent}${before}[\n\n${indent}]${comma}`,
    );
  if (escapeSlashes) text = text.replace(/\//g, "\\/");
  return `${text}\n`;
}

export function coreSimulatorError(domain, code, lines) {
  process.stderr.write(
    `An error was encountered processing the command (domain=${domain}, code=${code}):\n${lines.join("\n")}\n`,
  );
  return code & 0xff;
}

export function stateError(action, state) {
  return coreSimulatorError("com.apple.CoreSimulator.SimError", 405, [
    `Unable to ${action} in current state: ${state}`,
  ]);
}

/**
 * Reads an .app bundle as an installer does: a directory with an Info.plist naming CFBundleIdentifier.
 * Returns {error: "not-found" | "no-identifier"} when it is not one.
 */
export function readAppBundle(path) {
  if (!path || !existsSync(path) || !statSync(path).isDirectory() || !/\.app\/?$/.test(path)) {
    return { error: "not-found" };
  }
  const plistFile = join(path, "Info.plist");
  if (!existsSync(plistFile)) return { error: "no-identifier" };
  let info;
  try {
    info = parsePlist(readFileSync(plistFile, "utf8"));
  } catch {
    return { error: "no-identifier" };
  }
  if (typeof info?.CFBundleIdentifier !== "string" || info.CFBundleIdentifier === "") {
    return { error: "no-identifier" };
  }
  return {
    bundleId: info.CFBundleIdentifier,
    name: typeof info.CFBundleName === "string" ? info.CFBundleName : basename(path).replace(/\.app\/?$/, ""),
    version: typeof info.CFBundleShortVersionString === "string" ? info.CFBundleShortVersionString : null,
    build: typeof info.CFBundleVersion === "string" ? info.CFBundleVersion : null,
    path,
  };
}

/** A stable pseudo UUID from a text, in Apple's upper-case form (bundle containers, attachment names). */
export function uuidFrom(text) {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (const ch of text) {
    h1 = Math.imul(h1 ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ ch.charCodeAt(0), 0x811c9dc5) >>> 0;
  }
  const hex = (n) => n.toString(16).padStart(8, "0");
  const all = (hex(h1) + hex(h2) + hex((h1 ^ 0x5bd1e995) >>> 0) + hex((h2 ^ 0x1b873593) >>> 0)).toUpperCase();
  return `${all.slice(0, 8)}-${all.slice(8, 12)}-${all.slice(12, 16)}-${all.slice(16, 20)}-${all.slice(20, 32)}`;
}

export function unsupported(tool, what) {
  process.stderr.write(`stand-in ${tool}: unsupported: ${what}\n`);
  return 1;
}
