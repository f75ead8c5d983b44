import { useEffect, useRef, useState } from "react";
import { type Artifact, artifactUrl } from "../../api/artifacts.ts";
import { baseName, videoTime } from "../run/artifact-kind.ts";
import { videoPosition } from "./video-parts.ts";

/** A request to show a moment: `ms` after the session's start; `nonce` tells two clicks on one command apart. */
export interface SeekRequest {
  ms: number;
  nonce: number;
}

/**
 * The session's screen recording, part by part (Android keeps 180 s parts). A command's time, clicked in the
 * timeline, opens the part it falls in at that moment, counted from the session's start on the device host: the
 * recording begins then, or after the app's install when the session installs one (the API does not say when the
 * recording began, so that is as close as the page can place it).
 */
export function SessionVideo({
  runId,
  parts,
  seek,
  afterInstall,
}: {
  runId: string;
  parts: readonly Artifact[];
  seek: SeekRequest | undefined;
  /** The session installed a registered version first: the recording began that much after the session. */
  afterInstall: boolean;
}) {
  const [partIndex, setPartIndex] = useState(0);
  const [unplayable, setUnplayable] = useState(false);
  const video = useRef<HTMLVideoElement>(null);
  // The time to show once the part's metadata is in (a new part's source loads first).
  const pending = useRef<number | null>(null);
  const [shownAt, setShownAt] = useState<number | null>(null);

  const apply = () => {
    const element = video.current;
    const seconds = pending.current;
    if (!element || seconds === null || element.readyState < HTMLMediaElement.HAVE_METADATA) return;
    const end = Number.isFinite(element.duration) ? element.duration : seconds;
    element.currentTime = Math.min(seconds, end);
    pending.current = null;
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new request (its nonce) is what moves the video
  useEffect(() => {
    if (!seek) return;
    const position = videoPosition(seek.ms, parts.length);
    pending.current = position.seconds;
    setShownAt(seek.ms);
    if (position.part !== partIndex) setPartIndex(position.part);
    else apply();
  }, [seek?.nonce]);

  const part = parts[partIndex];
  if (!part) return null;
  const url = artifactUrl(runId, part.name, part);
  return (
    <figure className="space-y-2">
      {unplayable ? (
        <p className="flex h-72 items-center rounded-md border border-line bg-sunken p-3 text-sm text-muted">
          This browser cannot play the recording: download it from the artifacts below.
        </p>
      ) : (
        // biome-ignore lint/a11y/useMediaCaption: screenrecord records no audio
        <video
          ref={video}
          controls
          preload="metadata"
          src={url}
          aria-label={`Screen recording of the session, ${baseName(part.name)}`}
          onLoadedMetadata={apply}
          onError={() => setUnplayable(true)}
          className="mx-auto max-h-[28rem] w-auto max-w-full rounded-md border border-line bg-black"
        />
      )}
      <figcaption className="flex flex-wrap items-center gap-2 text-xs text-muted">
        <span>
          {baseName(part.name)}
          {parts.length > 1 && ` (part ${partIndex + 1} of ${parts.length})`}
          {shownAt !== null && ` · showing ${videoTime(shownAt / 1000)} after the session's start`}
          {shownAt !== null &&
            afterInstall &&
            " (the recording began after the app's install: the command may be a little earlier in it)"}
        </span>
        {parts.length > 1 && (
          <span className="flex gap-1">
            {parts.map((other, index) => (
              <button
                key={other.name}
                type="button"
                aria-pressed={index === partIndex}
                onClick={() => setPartIndex(index)}
                className="rounded border border-line px-1.5 py-0.5 hover:bg-sunken aria-pressed:bg-sunken aria-pressed:font-medium"
              >
                {index + 1}
              </button>
            ))}
          </span>
        )}
      </figcaption>
    </figure>
  );
}
