/**
 * The test targets of an .xctestrun (`man xcodebuild.xctestrun`), the file `xcodebuild build-for-testing`
 * writes beside the products. Two layouts exist:
 * - FormatVersion 1 (and the unversioned files before it): every top-level key but `__xctestrun_metadata__`
 *   is a test target, named by its key.
 * - FormatVersion 2 (Xcode 11+ with test plans): `TestConfigurations[].TestTargets[]`, each named by its
 *   `BlueprintName`; the same target may appear in several configurations.
 */
import { isDict, type PlistValue } from "./plist-value.ts";
import { printable } from "./printable.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

/** What one target says about where its pieces are and what they are called (paths keep their placeholders). */
export interface XctestrunTarget {
  name: string;
  testHostPath: string | null;
  testHostBundleIdentifier: string | null;
  testBundlePath: string | null;
  uiTargetAppPath: string | null;
  uiTargetAppBundleIdentifier: string | null;
}

export interface Xctestrun {
  formatVersion: 1 | 2;
  targets: XctestrunTarget[];
}

/** Far more than any project has; bounds the work (and the size of the stored `test`). */
export const MAX_TEST_TARGETS = 500;
const MAX_NAME_LENGTH = 255;

const what = "the .xctestrun";

export function readXctestrun(plist: PlistValue): Xctestrun {
  if (!isDict(plist)) throw refuse("is not a dictionary at its top level");
  const metadata = plist.get("__xctestrun_metadata__");
  const version = isDict(metadata) ? metadata.get("FormatVersion") : undefined;
  // Files from before Xcode 9 have no metadata and the version 1 layout.
  if (version === undefined || version === 1) return { formatVersion: 1, targets: version1(plist) };
  if (version === 2) return { formatVersion: 2, targets: version2(plist) };
  throw refuse(
    `has FormatVersion ${typeof version === "number" || typeof version === "string" ? printable(String(version)) : "of no number"}; we read versions 1 and 2 (what Xcode 8 to 16 write)`,
  );
}

function version1(plist: Map<string, PlistValue>): XctestrunTarget[] {
  const targets: XctestrunTarget[] = [];
  for (const [key, value] of plist) {
    if (key === "__xctestrun_metadata__") continue;
    // Only dictionaries are targets; nothing else is defined at the top of a version 1 file.
    if (!isDict(value)) continue;
    targets.push(target(checkedName(key, `the key ${printable(key)}`), value));
  }
  return finish(targets);
}

function version2(plist: Map<string, PlistValue>): XctestrunTarget[] {
  const configurations = plist.get("TestConfigurations");
  if (!Array.isArray(configurations)) throw refuse("has FormatVersion 2 but no TestConfigurations array");
  const targets: XctestrunTarget[] = [];
  configurations.forEach((configuration, c) => {
    const list = isDict(configuration) ? configuration.get("TestTargets") : undefined;
    if (!Array.isArray(list)) throw refuse(`has no TestTargets array in TestConfigurations[${c}]`);
    list.forEach((value, t) => {
      const where = `TestConfigurations[${c}].TestTargets[${t}]`;
      if (!isDict(value)) throw refuse(`has ${where}, which is not a dictionary`);
      const name = value.get("BlueprintName");
      if (typeof name !== "string") throw refuse(`has no BlueprintName in ${where}`);
      targets.push(target(checkedName(name, `${where}.BlueprintName`), value));
    });
  });
  return finish(targets);
}

function target(name: string, dict: Map<string, PlistValue>): XctestrunTarget {
  const text = (key: string) => {
    const value = dict.get(key);
    return typeof value === "string" && value !== "" ? value : null;
  };
  return {
    name,
    testHostPath: text("TestHostPath"),
    testHostBundleIdentifier: text("TestHostBundleIdentifier"),
    testBundlePath: text("TestBundlePath"),
    uiTargetAppPath: text("UITargetAppPath"),
    uiTargetAppBundleIdentifier: text("UITargetAppBundleIdentifier"),
  };
}

/** A target's name becomes the first part of -only-testing identifiers and is stored and shown: plain text. */
function checkedName(name: string, where: string): string {
  if (
    name === "" ||
    name.length > MAX_NAME_LENGTH ||
    [...name].some((char) => char.charCodeAt(0) < 0x20 || char === "\u007f" || char === "/") ||
    !name.isWellFormed()
  ) {
    throw refuse(
      `has ${where}, which is not a test target name (1 to ${MAX_NAME_LENGTH} printable characters, no "/")`,
    );
  }
  return name;
}

function finish(targets: XctestrunTarget[]): XctestrunTarget[] {
  if (targets.length === 0) throw refuse("names no test targets");
  if (targets.length > MAX_TEST_TARGETS) {
    throw refuse(`names ${targets.length} test targets, more than the ${MAX_TEST_TARGETS} we read`);
  }
  return targets;
}

function refuse(reason: string): UnsupportedBinaryError {
  return new UnsupportedBinaryError(`${what} ${reason}`);
}
