import { parseAabManifest } from "./aab-manifest.ts";
import { readAndroidManifest } from "./android-manifest.ts";
import { parseApkManifest } from "./apk-manifest.ts";
import type { BinaryMetadata } from "./binary-metadata.ts";
import { detectFormat } from "./detect-format.ts";
import { readInfoPlist } from "./info-plist.ts";
import { MAX_INFO_PLIST_BYTES, MAX_MANIFEST_BYTES } from "./limits.ts";
import { withZipArchive } from "./zip-archive.ts";

/**
 * Reads an app binary's metadata from the file at `filePath`, deciding APK, AAB, IPA or zipped .app by what the
 * zip holds. Only the central directory and the manifest or Info.plist are read, never the whole file.
 *
 * @throws UnsupportedBinaryError when the file is not one of those formats or is corrupt (a 400 for the caller);
 *   any other error (the file is missing, a disk error) is the server's.
 * @example
 * const metadata = await inspectBinary("/tmp/upload-1234");
 * metadata.package_name; // "com.example.basic"
 */
export function inspectBinary(filePath: string): Promise<BinaryMetadata> {
  return withZipArchive(filePath, async (zip): Promise<BinaryMetadata> => {
    const found = await detectFormat(zip.entries());
    if (found.platform === "android") {
      const bytes = await zip.read(found.manifest, MAX_MANIFEST_BYTES);
      const manifest = readAndroidManifest(
        found.format === "apk" ? parseApkManifest(bytes) : parseAabManifest(bytes),
      );
      return {
        format: found.format,
        platform: "android",
        package_name: manifest.package_name,
        version_name: manifest.version_name,
        version_code: manifest.version_code,
        min_sdk: manifest.min_sdk,
        target_sdk: manifest.target_sdk,
        min_os_version: null,
        abis: found.abis,
        permissions: manifest.permissions,
        debuggable: manifest.debuggable,
        display_name: manifest.display_name,
      };
    }
    const plist = readInfoPlist(await zip.read(found.infoPlist, MAX_INFO_PLIST_BYTES));
    return {
      format: found.format,
      platform: "ios",
      package_name: plist.package_name,
      version_name: plist.version_name,
      version_code: plist.version_code,
      min_sdk: null,
      target_sdk: null,
      min_os_version: plist.min_os_version,
      abis: [],
      permissions: [],
      debuggable: false,
      display_name: plist.display_name,
    };
  });
}
