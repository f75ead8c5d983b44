import { useState } from "react";
import { baseName, videoStartSeconds, videoTime } from "./artifact-kind.ts";

/**
 * The screen recording of the failure, opened a few seconds before it (the media fragment #t=, and currentTime
 * once the metadata is in, for a browser that ignores the fragment). Only its metadata loads until played.
 */
export function FailureVideo({
  url,
  name,
  offsetMs,
  testName,
}: {
  url: string;
  name: string;
  offsetMs: number | null;
  testName: string;
}) {
  const start = videoStartSeconds(offsetMs);
  const [unplayable, setUnplayable] = useState(false);
  return (
    <figure className="space-y-1">
      {unplayable ? (
        <p className="flex h-72 w-48 items-center rounded-md border border-line bg-sunken p-3 text-xs text-muted">
          This browser cannot play the recording: download it.
        </p>
      ) : (
        // A screen recording has no speech to caption.
        // biome-ignore lint/a11y/useMediaCaption: screenrecord records no audio
        <video
          controls
          preload="metadata"
          src={start > 0 ? `${url}#t=${start}` : url}
          aria-label={`Screen recording of ${testName}`}
          onLoadedMetadata={(event) => {
            const video = event.currentTarget;
            if (start > 0 && start < video.duration && video.currentTime < start - 0.25)
              video.currentTime = start;
          }}
          onError={() => setUnplayable(true)}
          className="h-72 max-w-full rounded-md border border-line bg-black"
        />
      )}
      <figcaption className="text-xs text-muted">
        {offsetMs === null
          ? `Recording: ${baseName(name)}`
          : `Fails at ${videoTime(offsetMs / 1000)} of ${baseName(name)}; opens at ${videoTime(start)}`}
      </figcaption>
    </figure>
  );
}
