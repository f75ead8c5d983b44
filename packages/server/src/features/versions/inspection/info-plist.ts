/** Reads the metadata fields from an iOS app's Info.plist, in either of its two encodings. */
import { BINARY_PLIST_MAGIC, readBinaryPlistKeys } from "./binary-plist.ts";
import type { PlistScalar } from "./plist-scalar.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";
import { readXmlPlistKeys } from "./xml-plist.ts";

export interface InfoPlistInfo {
  package_name: string;
  version_name: string | null;
  version_code: string | null;
  min_os_version: string | null;
  display_name: string | null;
}

const KEYS = new Set([
  "CFBundleIdentifier",
  "CFBundleShortVersionString",
  "CFBundleVersion",
  "MinimumOSVersion",
  "CFBundleDisplayName",
  "CFBundleName",
]);

export function readInfoPlist(buffer: Buffer): InfoPlistInfo {
  // Xcode writes binary plists into IPAs; hand-made or older bundles keep the XML form.
  const binary = buffer.subarray(0, BINARY_PLIST_MAGIC.length).toString("latin1") === BINARY_PLIST_MAGIC;
  const values = binary ? readBinaryPlistKeys(buffer, KEYS) : readXmlPlistKeys(buffer, KEYS);
  const get = (key: string) => text(values.get(key));

  const packageName = get("CFBundleIdentifier");
  if (!packageName) throw new UnsupportedBinaryError("its Info.plist has no CFBundleIdentifier");
  return {
    package_name: packageName,
    version_name: get("CFBundleShortVersionString"),
    version_code: get("CFBundleVersion"),
    min_os_version: get("MinimumOSVersion"),
    display_name: get("CFBundleDisplayName") ?? get("CFBundleName"),
  };
}

/** Apple types these keys as strings; a build number written as <integer> still means that number's text. */
function text(value: PlistScalar | undefined): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return null;
}
