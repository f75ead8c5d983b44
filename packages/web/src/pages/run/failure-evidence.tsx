import { useQuery } from "@tanstack/react-query";
import { useRef } from "react";
import { artifactsQuery, artifactUrl } from "../../api/artifacts.ts";
import type { TestCase } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { artifactKind, baseName, isErrorLine } from "./artifact-kind.ts";
import { FailureVideo } from "./failure-video.tsx";
import { ScreenshotThumbnail } from "./screenshot-thumbnail.tsx";
import { TextExcerpt } from "./text-excerpt.tsx";
import { useSeenOnce } from "./use-seen-once.ts";

/** What a capture is, in a word, for its download link ("Download screenshot"); the full name is its title. */
function downloadLabel(name: string): string {
  const kind = artifactKind(name);
  if (kind === "image") return "screenshot";
  if (kind === "text") return "logcat";
  if (kind === "video") return `video (${baseName(name)})`;
  return baseName(name);
}

/**
 * What the agent captured at a failure, beside it: the screenshot, the video at the failing moment, the test's
 * logcat lines, and a download link for each. Fetched only once the failure comes into view, and only once
 * stored: a test is reported as it fails, its files are uploaded when its device run ends.
 */
export function FailureEvidence({ runId, test, live }: { runId: string; test: TestCase; live: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const seen = useSeenOnce(box);
  // The run's artifact list (one request for every failure, shared with the Artifacts section).
  const stored = useQuery({ ...artifactsQuery(runId, live), enabled: seen && test.artifacts.length > 0 });
  if (test.artifacts.length === 0) return null;

  const isStored = (name: string) =>
    stored.data?.some(
      (a) => a.name === name && a.device === test.device.position && a.attempt === test.attempt,
    ) ?? false;
  const available = test.artifacts.filter(isStored);
  const url = (name: string) =>
    artifactUrl(runId, name, { device: test.device.position, shard: test.shard, attempt: test.attempt });
  const first = (kind: string) => available.find((name) => artifactKind(name) === kind);
  const screenshot = first("image");
  const video = first("video");
  const logcat = first("text");
  return (
    <div ref={box} className="space-y-3">
      {seen && stored.data && available.length < test.artifacts.length && (
        <p className="text-xs text-muted">
          {live
            ? "The screenshot, video and logcat arrive when the device run ends."
            : "Some captures named on this test were never uploaded."}
        </p>
      )}
      {stored.error && <ProblemMessage error={stored.error} />}
      {seen && stored.data ? (
        <>
          {(screenshot || video) && (
            <div className="flex flex-wrap items-start gap-3">
              {screenshot && (
                <ScreenshotThumbnail
                  url={url(screenshot)}
                  alt={`Screenshot of ${test.name} when it failed`}
                />
              )}
              {video && (
                <FailureVideo
                  url={url(video)}
                  name={video}
                  offsetMs={test.video_offset_ms}
                  testName={test.name}
                />
              )}
            </div>
          )}
          {logcat && (
            <TextExcerpt url={url(logcat)} label={`Logcat of ${test.name}`} highlight={isErrorLine} />
          )}
        </>
      ) : (
        !stored.error && <p className="text-xs text-muted">Loading what was captured at the failure…</p>
      )}
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-xs" aria-label={`Downloads for ${test.name}`}>
        {available.map((name) => (
          <li key={name}>
            <a
              href={url(name)}
              download={baseName(name)}
              className="text-accent hover:underline"
              title={name}
            >
              Download {downloadLabel(name)}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}
