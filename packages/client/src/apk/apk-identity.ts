import { readManifestHead } from "./binary-xml-manifest.ts";
import { readZipEntry } from "./zip-entry.ts";

/** A manifest larger than this is not one to read on a CI machine (the server's inspection bounds it too). */
const maxManifestBytes = 8 * 1024 * 1024;

export interface ApkIdentity {
  packageName: string;
  versionName: string | undefined;
  versionCode: number | undefined;
}

/**
 * An APK's package name, versionName and versionCode, read from its AndroidManifest.xml on this machine, so
 * `testbay flank run` knows the app and the version before anything is sent.
 */
export async function readApkIdentity(file: string): Promise<ApkIdentity> {
  const manifest = await readZipEntry(file, "AndroidManifest.xml", maxManifestBytes);
  if (!manifest) throw new Error(`${file} has no AndroidManifest.xml: is it an APK?`);
  const head = readManifestHead(manifest);
  if (!head.package) throw new Error(`${file}'s AndroidManifest.xml names no package`);
  return { packageName: head.package, versionName: head.versionName, versionCode: head.versionCode };
}

/** The version flank run registers: versionName+versionCode (`1.4.2+142`), as API.md §14 says. */
export function versionOf(identity: ApkIdentity): string | undefined {
  if (identity.versionName && identity.versionCode !== undefined)
    return `${identity.versionName}+${identity.versionCode}`;
  if (identity.versionName) return identity.versionName;
  return identity.versionCode !== undefined ? String(identity.versionCode) : undefined;
}
