import type { TestPackageUploadResult } from "../sdk/upload.ts";
import { formatBytes } from "./output.ts";
import type { Session } from "./session.ts";
import { progressReporter } from "./upload-progress.ts";

/** The test package, after the version's binary (the server refuses it for a version it does not know). */
export async function uploadTestPackage(
  session: Session,
  options: { app: string; version: string; testFile: string },
): Promise<TestPackageUploadResult> {
  const label = `the test package of ${options.app} ${options.version}`;
  const progress = progressReporter(session, label);
  try {
    const result = await session
      .testbay()
      .versions.uploadTestPackage(options.app, options.version, options.testFile, {
        onProgress: progress.onProgress,
      });
    progress.stop();
    const { sha256 } = result.testPackage;
    const tests =
      result.testPackage.format === "apk"
        ? `${result.testPackage.test.package_name} instrumenting ${result.testPackage.test.target_package}`
        : `XCUITest targets ${result.testPackage.test.test_targets.map((target) => target.name).join(", ")}`;
    const what = `sha256 ${sha256.slice(0, 12)}…, ${tests}`;
    if (result.outcome === "skipped") {
      session.say(
        `${capitalize(label)} is uploaded already, the same file (${what}): skipped the upload (nothing was transferred).`,
      );
    } else if (result.outcome === "already_landed") {
      session.say(
        // By an earlier attempt of ours that landed, or by another job: either way these very bytes.
        `${capitalize(label)} was stored meanwhile, the same file (same sha256): nothing more to do.`,
      );
    } else {
      session.say(`Uploaded ${label}: ${formatBytes(result.sizeBytes)}, ${what}.`);
    }
    return result;
  } catch (error) {
    progress.stop();
    throw error;
  }
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The test package upload as --json prints it: null without --test-file. */
export function testPackageJson(result: TestPackageUploadResult | undefined) {
  return result
    ? { outcome: result.outcome, size_bytes: result.sizeBytes, test_package: result.testPackage }
    : null;
}
