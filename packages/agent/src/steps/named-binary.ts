/**
 * The agent's cache names files by their sha256 (`<sha256>.bin`), but the tools that take an app look at the
 * name: adb refuses a file that does not end in `.apk`, `bundletool` wants `.aab`, Xcode's and Maestro's iOS
 * installs want `.ipa`, `.app` or a zip. So a step gets the cached file through a link with a proper name.
 */
import { rm, symlink } from "node:fs/promises";
import path from "node:path";
import type { BinaryMetadata } from "@testbay/client";
import { artifactSegment } from "../android/artifact-names.ts";

/** The extension a binary of this format is known by; a zipped `.app` travels as `.zip`. */
const extensions: Record<BinaryMetadata["format"], string> = {
  apk: "apk",
  aab: "aab",
  ipa: "ipa",
  app: "zip",
};

/** A link named `<name>.<extension>` in `dir` to the cached file, replacing one left by an earlier step. */
export async function linkNamed(
  cached: string,
  dir: string,
  name: string,
  extension: string,
): Promise<string> {
  const link = path.join(dir, `${artifactSegment(name)}.${extension}`);
  await rm(link, { force: true });
  await symlink(cached, link);
  return link;
}

/** The app's binary as `<package>.<apk|aab|ipa|zip>` in `dir`. */
export function appNamed(cached: string, dir: string, packageName: string, format: BinaryMetadata["format"]) {
  return linkNamed(cached, dir, packageName, extensions[format]);
}
