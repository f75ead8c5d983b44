/**
 * Tells an APK, AAB, IPA and zipped .app apart by the entries inside the zip, never by the file name: uploads
 * arrive as anonymous temp files, and a renamed file must not change what we think it is.
 */
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

export type DetectedBinary<E> =
  | { platform: "android"; format: "apk" | "aab"; manifest: E; abis: string[] }
  | { platform: "ios"; format: "ipa" | "app"; infoPlist: E };

const APK_MANIFEST = "AndroidManifest.xml";
const AAB_MANIFEST = "base/manifest/AndroidManifest.xml";
/** A bare AndroidManifest.xml is no APK; with one of these beside it, it is. */
const isApkCompanion = (name: string) =>
  name === "classes.dex" || name === "resources.arsc" || name.startsWith("META-INF/");
const APK_LIB = /^lib\/([^/]+)\/[^/]+\.so$/;
/** Native libraries of any module of a bundle: base/lib/<abi>/, feature/lib/<abi>/, … */
const AAB_LIB = /^[^/]+\/lib\/([^/]+)\/[^/]+\.so$/;
/** Only the app's own Info.plist: frameworks, extensions and watch apps keep theirs deeper. */
const IPA_PLIST = /^Payload\/[^/]+\.app\/Info\.plist$/;
const APP_PLIST = /^[^/]+\.app\/Info\.plist$/;

/** Reads every entry name once (the central directory only) and picks the entries to inflate. */
export async function detectFormat<E extends { readonly name: string }>(
  entries: AsyncIterable<E>,
): Promise<DetectedBinary<E>> {
  const found = new Map<string, E>();
  let apkCompanion = false;
  const apkAbis = new Set<string>();
  const aabAbis = new Set<string>();
  let ipaPlist: E | undefined;
  let appPlist: E | undefined;

  for await (const entry of entries) {
    const name = entry.name;
    if (name === APK_MANIFEST || name === AAB_MANIFEST) {
      // Android refuses zips with duplicate names; two manifests is how some exploits hide the real one.
      if (found.has(name)) throw new UnsupportedBinaryError(`it holds ${name} twice`);
      found.set(name, entry);
    }
    if (isApkCompanion(name)) apkCompanion = true;
    const apkLib = APK_LIB.exec(name)?.[1];
    if (apkLib) apkAbis.add(apkLib);
    const aabLib = AAB_LIB.exec(name)?.[1];
    if (aabLib) aabAbis.add(aabLib);
    // An IPA has one app; should one hold several, the first by name wins so the answer is stable.
    if (IPA_PLIST.test(name) && (!ipaPlist || name < ipaPlist.name)) ipaPlist = entry;
    if (APP_PLIST.test(name) && (!appPlist || name < appPlist.name)) appPlist = entry;
  }

  const apkManifest = found.get(APK_MANIFEST);
  const aabManifest = found.get(AAB_MANIFEST);
  if (apkManifest && apkCompanion)
    return { platform: "android", format: "apk", manifest: apkManifest, abis: sorted(apkAbis) };
  if (aabManifest)
    return { platform: "android", format: "aab", manifest: aabManifest, abis: sorted(aabAbis) };
  if (ipaPlist) return { platform: "ios", format: "ipa", infoPlist: ipaPlist };
  if (appPlist) return { platform: "ios", format: "app", infoPlist: appPlist };
  if (apkManifest) {
    throw new UnsupportedBinaryError(
      "it holds an AndroidManifest.xml but no classes.dex, resources.arsc or META-INF/, so it is not a built APK",
    );
  }
  throw new UnsupportedBinaryError(
    "it is a zip archive, but it holds no AndroidManifest.xml, base/manifest/AndroidManifest.xml, " +
      "Payload/*.app/Info.plist or *.app/Info.plist",
  );
}

function sorted(values: Set<string>): string[] {
  return [...values].sort();
}
