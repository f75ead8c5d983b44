import type { Artifact } from "../../api/artifacts.ts";
import { artifactUrl } from "../../api/artifacts.ts";
import { isErrorLine } from "../run/artifact-kind.ts";
import { TextExcerpt } from "../run/text-excerpt.tsx";

/** The session's device log: Android's logcat, an iOS simulator's `log stream` (docs/appium.md "Afterwards"). */
export const isDeviceLog = (artifact: Artifact) =>
  /^device-[^/]+\/(logcat|device-log)\.txt$/.test(artifact.name);

/** The device log inline, its errors marked as beside a run's failure; an empty one says so. */
export function DeviceLog({ runId, log }: { runId: string; log: Artifact }) {
  if (log.size_bytes === 0) {
    return (
      <p className="text-sm text-muted">
        The device log is empty: the device wrote nothing during the session.
      </p>
    );
  }
  return (
    <TextExcerpt
      url={artifactUrl(runId, log.name, log)}
      label="The device log of the session"
      highlight={isErrorLine}
    />
  );
}
