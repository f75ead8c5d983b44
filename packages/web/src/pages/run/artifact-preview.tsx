import { type ArtifactKind, baseName, isErrorLine } from "./artifact-kind.ts";
import { TextExcerpt } from "./text-excerpt.tsx";

/** One artifact shown inline, as its kind allows: a picture, a video (metadata first), or its first lines. */
export function ArtifactPreview({ url, name, kind }: { url: string; name: string; kind: ArtifactKind }) {
  if (kind === "image") {
    return (
      <img
        src={url}
        alt={baseName(name)}
        className="max-h-96 w-auto max-w-full rounded-md border border-line"
      />
    );
  }
  if (kind === "video") {
    return (
      // biome-ignore lint/a11y/useMediaCaption: screenrecord records no audio
      <video
        controls
        preload="metadata"
        src={url}
        aria-label={baseName(name)}
        className="max-h-96 max-w-full rounded-md bg-black"
      />
    );
  }
  if (kind === "text") {
    // A logcat (the whole device log or a test's cut) has its errors marked, as beside a failure.
    return (
      <TextExcerpt
        url={url}
        label={baseName(name)}
        highlight={/logcat/i.test(name) ? isErrorLine : undefined}
      />
    );
  }
  return null;
}
