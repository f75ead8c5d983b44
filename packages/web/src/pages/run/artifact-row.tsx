import { useState } from "react";
import { type Artifact, artifactUrl } from "../../api/artifacts.ts";
import { formatBytes } from "../../format/bytes.ts";
import { artifactKind, baseName } from "./artifact-kind.ts";
import { ArtifactPreview } from "./artifact-preview.tsx";

/**
 * One stored file as a list item: its name, what it is, a preview for pictures, videos and text, and a download
 * link. `label` is the name shown (a file tree shows the last segment; the full name stays for screen readers);
 * `facts` replaces "content type · size" (a pulled file's type says little: the agent cannot know it).
 */
export function ArtifactRow({
  runId,
  artifact,
  label = artifact.name,
  facts = `${artifact.content_type} · ${formatBytes(artifact.size_bytes)}`,
}: {
  runId: string;
  artifact: Artifact;
  label?: string;
  facts?: string;
}) {
  const [previewing, setPreviewing] = useState(false);
  const kind = artifactKind(artifact.name, artifact.content_type);
  const url = artifactUrl(runId, artifact.name, artifact);
  const named = label !== artifact.name;
  return (
    <li className="space-y-2 py-2">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
        <span
          className="min-w-0 basis-full font-mono text-xs break-all sm:flex-1 sm:basis-0"
          title={named ? artifact.name : undefined}
        >
          {label}
        </span>
        <span className="text-xs text-muted">{facts}</span>
        {kind !== "other" && (
          <button
            type="button"
            aria-expanded={previewing}
            onClick={() => setPreviewing(!previewing)}
            className="rounded-md border border-line px-2 py-0.5 text-xs hover:bg-sunken"
          >
            {previewing ? "Hide" : "Preview"}
            <span className="sr-only"> {artifact.name}</span>
          </button>
        )}
        <a
          href={url}
          download={baseName(artifact.name)}
          className="rounded-md border border-line px-2 py-0.5 text-xs hover:bg-sunken"
        >
          Download<span className="sr-only"> {artifact.name}</span>
        </a>
      </div>
      {previewing && <ArtifactPreview url={url} name={artifact.name} kind={kind} />}
    </li>
  );
}
