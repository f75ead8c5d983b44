import { parseApkManifest } from "./apk-manifest.ts";
import { detectFormat } from "./detect-format.ts";
import { readInstrumentation } from "./instrumentation-manifest.ts";
import { MAX_MANIFEST_BYTES } from "./limits.ts";
import type { TestPackageContent } from "./test-package-content.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";
import { inspectXctestPackage, isXctestrunEntry } from "./xctest-package.ts";
import { withZipArchive, type ZipEntry } from "./zip-archive.ts";

/**
 * An XCUITest bundle (a zip with an .xctestrun) that cannot be read: its own error, so the caller can say what
 * an XCUITest bundle must hold rather than "not an APK".
 */
export class XctestPackageError extends UnsupportedBinaryError {
  override name = "XctestPackageError";
}

/**
 * Reads a test package: an Android instrumentation APK (its `<instrumentation>` and SDK levels), or an iOS
 * XCUITest bundle (the zip of `xcodebuild build-for-testing` output, told by its .xctestrun). Like
 * inspectBinary, only the central directory and the few files needed are read.
 *
 * @throws XctestPackageError for a zip with an .xctestrun that is not a usable XCUITest bundle;
 *   UnsupportedBinaryError for anything else that is neither.
 */
export function inspectTestPackage(filePath: string): Promise<TestPackageContent> {
  return withZipArchive(filePath, async (zip) => {
    const entries: ZipEntry[] = [];
    let xctest = false;
    for await (const entry of zip.entries()) {
      xctest ||= isXctestrunEntry(entry.name);
      entries.push(entry);
    }
    if (xctest) {
      try {
        return { format: "xctest", test: await inspectXctestPackage(zip, entries) };
      } catch (error) {
        if (!(error instanceof UnsupportedBinaryError)) throw error;
        throw new XctestPackageError(error.message);
      }
    }
    const found = await detectFormat(listed(entries));
    if (found.platform !== "android" || found.format !== "apk") {
      throw new UnsupportedBinaryError(
        `it is an app (${found.format}), not an instrumentation APK with an <instrumentation> element or a zip of xcodebuild build-for-testing output with an .xctestrun`,
      );
    }
    const test = readInstrumentation(parseApkManifest(await zip.read(found.manifest, MAX_MANIFEST_BYTES)));
    return { format: "apk", test };
  });
}

async function* listed(entries: ZipEntry[]): AsyncIterable<ZipEntry> {
  yield* entries;
}
