import { parseApkManifest } from "./apk-manifest.ts";
import { detectFormat } from "./detect-format.ts";
import { type InstrumentationInfo, readInstrumentation } from "./instrumentation-manifest.ts";
import { MAX_MANIFEST_BYTES } from "./limits.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";
import { withZipArchive, type ZipEntry } from "./zip-archive.ts";

/** What `xcodebuild build-for-testing` zips always hold at their top (or one folder down). */
const XCTESTRUN = /^(?:[^/]+\/)?[^/]+\.xctestrun$/;

/**
 * An iOS test bundle the server recognises but does not read yet (issue 16): its own error, so the caller can
 * say when it will be accepted rather than "not an APK".
 */
export class XctestNotSupportedError extends UnsupportedBinaryError {
  override name = "XctestNotSupportedError";
}

/**
 * Reads a test package: an Android instrumentation APK (its `<instrumentation>` and SDK levels). Like
 * inspectBinary, only the central directory and the manifest are read.
 *
 * @throws XctestNotSupportedError for an XCUITest bundle zip; UnsupportedBinaryError for anything else that
 *   is not an APK with an `<instrumentation>`.
 */
export function inspectTestPackage(filePath: string): Promise<InstrumentationInfo> {
  return withZipArchive(filePath, async (zip) => {
    const entries: ZipEntry[] = [];
    for await (const entry of zip.entries()) {
      if (XCTESTRUN.test(entry.name)) {
        throw new XctestNotSupportedError("it is an iOS XCUITest bundle (it holds an .xctestrun file)");
      }
      entries.push(entry);
    }
    const found = await detectFormat(listed(entries));
    if (found.platform !== "android" || found.format !== "apk") {
      throw new UnsupportedBinaryError(
        `it is an app (${found.format}), not an instrumentation APK with an <instrumentation> element`,
      );
    }
    return readInstrumentation(parseApkManifest(await zip.read(found.manifest, MAX_MANIFEST_BYTES)));
  });
}

async function* listed(entries: ZipEntry[]): AsyncIterable<ZipEntry> {
  yield* entries;
}
