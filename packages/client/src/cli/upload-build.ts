import type { UploadResult } from "../sdk/upload.ts";
import { formatBytes } from "./output.ts";
import type { Session } from "./session.ts";
import { progressReporter } from "./upload-progress.ts";

/** Uploads a version's build (upload and run): HEAD first, so a registered version transfers nothing. */
export async function uploadBuild(
  session: Session,
  options: { app: string; version: string; file: string },
): Promise<UploadResult> {
  const file = options.file;
  const label = `${options.app} ${options.version}`;
  const progress = progressReporter(session, label);
  try {
    const result = await session.testbay().versions.upload({
      packageName: options.app,
      version: options.version,
      file,
      onProgress: progress.onProgress,
    });
    progress.stop();
    if (result.outcome === "skipped") {
      const sha = result.version?.sha256;
      session.say(
        `${label} is registered already with this very build${sha ? ` (sha256 ${sha.slice(0, 12)}…)` : ""}: skipped the upload (nothing was transferred).`,
      );
    } else if (result.outcome === "already_landed") {
      session.say(
        `${label} was registered by an earlier attempt of this upload (same sha256): nothing more to do.`,
      );
    } else {
      session.say(`Uploaded ${label}: ${formatBytes(result.sizeBytes)}, sha256 ${result.version?.sha256}.`);
    }
    return result;
  } catch (error) {
    progress.stop();
    throw error;
  }
}

/** The build upload as --json prints it. */
export function uploadJson(result: UploadResult) {
  return { outcome: result.outcome, size_bytes: result.sizeBytes, version: result.version ?? null };
}
