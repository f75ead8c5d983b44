import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { artifactsQuery, artifactUrl } from "../../api/artifacts.ts";
import type { TestCase } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { StatusChip } from "../../components/status-chip.tsx";
import { formatDuration } from "../../format/duration.ts";
import { artifactKind, baseName, isErrorLine } from "./artifact-kind.ts";
import { ScreenshotThumbnail } from "./screenshot-thumbnail.tsx";
import { triesInWords, tryLabel } from "./test-tries.ts";
import { TextExcerpt } from "./text-excerpt.tsx";

/** What a capture is, in a word, for its download link; the full name is its title. */
function downloadLabel(name: string): string {
  const kind = artifactKind(name);
  return kind === "image" ? "screenshot" : kind === "text" ? "logcat" : baseName(name);
}

/** Each try with its status, duration, message, and what was captured for it (screenshot, logcat cut). */
function Tries({ runId, test, live }: { runId: string; test: TestCase; live: boolean }) {
  // The run's artifact list, shared with the failures and the Artifacts section: one request for them all.
  const stored = useQuery(artifactsQuery(runId, live));
  const tries = test.attempts;
  return (
    <>
      {stored.error && <ProblemMessage error={stored.error} />}
      <ol className="mt-2 space-y-3">
        {tries.map((one, index) => {
          const label = tryLabel(tries, index);
          // A try's files are those of its device run attempt (each rerun names its own).
          const url = (name: string) =>
            artifactUrl(runId, name, {
              device: test.device.position,
              shard: test.shard,
              attempt: one.attempt,
            });
          const available = one.artifacts.filter(
            (name) =>
              stored.data?.some(
                (a) => a.name === name && a.device === test.device.position && a.attempt === one.attempt,
              ) ?? false,
          );
          const screenshot = available.find((name) => artifactKind(name) === "image");
          const logcat = available.find((name) => artifactKind(name) === "text");
          return (
            <li
              // biome-ignore lint/suspicious/noArrayIndexKey: a try is its place among the test's tries
              key={index}
              aria-label={`${label}: ${one.status}`}
              className="space-y-2 rounded-md border border-line p-2"
            >
              <div className="flex flex-wrap items-center gap-2 text-xs">
                <span className="font-medium">{label}</span>
                <StatusChip status={one.status} />
                {one.duration_ms !== null && (
                  <span className="text-muted">{formatDuration(one.duration_ms)}</span>
                )}
              </div>
              {one.message && <p className="text-sm break-words whitespace-pre-wrap">{one.message}</p>}
              {stored.data && available.length < one.artifacts.length && (
                <p className="text-xs text-muted">
                  {live
                    ? "This try's captures arrive when its device run ends."
                    : "Some captures named on this try were never uploaded."}
                </p>
              )}
              {screenshot && (
                <ScreenshotThumbnail
                  url={url(screenshot)}
                  alt={`Screenshot of ${test.name}, ${label.toLowerCase()}`}
                />
              )}
              {logcat && (
                <TextExcerpt
                  url={url(logcat)}
                  label={`Logcat of ${test.name}, ${label.toLowerCase()}`}
                  highlight={isErrorLine}
                />
              )}
              {available.length > 0 && (
                <ul
                  className="flex flex-wrap gap-x-4 gap-y-1 text-xs"
                  aria-label={`Downloads of ${label.toLowerCase()}`}
                >
                  {available.map((name) => (
                    <li key={name}>
                      <a
                        href={url(name)}
                        download={baseName(name)}
                        className="break-all text-accent hover:underline"
                        title={name}
                      >
                        Download {downloadLabel(name)}
                      </a>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ol>
    </>
  );
}

/**
 * A test's tries, folded under its entry ("Tries (2): failed, then passed"): each try's status, message and
 * captures. Its files are fetched only once opened, as a run can have many flaky tests.
 */
export function TestTriesList({ runId, test, live }: { runId: string; test: TestCase; live: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary className="cursor-pointer text-sm text-accent">
        Tries ({test.attempts.length}): {triesInWords(test.attempts)}
      </summary>
      {open && <Tries runId={runId} test={test} live={live} />}
    </details>
  );
}
