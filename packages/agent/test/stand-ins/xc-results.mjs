// The result bundle the xcodebuild stand-in writes and the xcresulttool stand-in reads. Its inside is the
// stand-ins' own (a real .xcresult is a CAS database no tool here can write): Info.plist as Xcode writes one,
// and Data/stand-in-results.json with what ran. Only bin/xcrun xcresulttool reads it, and it answers in the
// shapes of ../fixtures/apple/xcresulttool-*.json.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeJson } from "./apple-state.mjs";
import { uuidFrom } from "./xc-common.mjs";
import { writePlist } from "./xc-plist.mjs";

export const RESULTS_FILE = join("Data", "stand-in-results.json");

export function attachmentsDir(bundle) {
  return join(bundle, "Data", "attachments");
}

/** Creates the bundle directory with the Info.plist keys Xcode 16 writes (values are the stand-in's). */
export function createBundle(bundle) {
  mkdirSync(attachmentsDir(bundle), { recursive: true });
  writeFileSync(
    join(bundle, "Info.plist"),
    writePlist({
      dateCreated: new Date(),
      externalLocations: [],
      rootId: { hash: `0~${uuidFrom(bundle).replace(/-/g, "")}` },
      storage: { backend: "fileBacked2", compression: "standard" },
      version: { major: 3, minor: 53 },
    }),
  );
}

export function saveResults(bundle, results) {
  writeJson(join(bundle, RESULTS_FILE), results);
}

/** The results of a bundle, or null when the path is not a bundle the stand-in wrote. */
export function loadResults(bundle) {
  const file = join(bundle, RESULTS_FILE);
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, "utf8"));
}

/** Xcode's duration text as `get test-results tests` prints it ("0.0039s", "12s", "1m 14s"), en_US decimals. */
export function durationText(seconds) {
  if (seconds >= 60) return `${Math.floor(seconds / 60)}m ${Math.round(seconds % 60)}s`;
  if (seconds >= 10) return `${Math.round(seconds)}s`;
  if (seconds >= 1) return `${Number(seconds.toFixed(1))}s`;
  if (seconds === 0) return "0s";
  return `${Number(seconds.toPrecision(2))}s`;
}
