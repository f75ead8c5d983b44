import type { UploadProgress } from "../sdk/upload.ts";
import { formatBytes } from "./output.ts";
import { uploadProgress } from "./progress.ts";
import type { Session } from "./session.ts";

/** A line per attempt where no bar is drawn (CI logs), so a log shows that a transfer started or restarted. */
export function progressReporter(
  session: Session,
  label: string,
): {
  onProgress: (p: UploadProgress) => void;
  stop: () => void;
} {
  const progress = uploadProgress(session.io.stderr, session.io.env, `Uploading ${label}`);
  let announced = -1;
  return {
    onProgress: (p) => {
      if (!progress.isBar && p.attempt !== announced) {
        announced = p.attempt;
        session.say(
          `Uploading ${label} (${formatBytes(p.totalBytes)})${p.attempt > 0 ? `, attempt ${p.attempt + 1}` : ""}…`,
        );
      }
      progress.update(p);
    },
    stop: () => progress.stop(),
  };
}
