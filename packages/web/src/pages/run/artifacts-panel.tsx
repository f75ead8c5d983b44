import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { type Artifact, artifactsQuery, artifactUrl } from "../../api/artifacts.ts";
import type { DeviceRun } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { formatBytes } from "../../format/bytes.ts";
import { artifactKind } from "./artifact-kind.ts";
import { ArtifactPreview } from "./artifact-preview.tsx";
import { deviceEntries } from "./shards.ts";

interface Group {
  device: number;
  attempt: number;
  items: Artifact[];
}

/** Artifacts by device run, then attempt, in the order the API lists them (position, attempt, name). */
function grouped(items: readonly Artifact[]): Group[] {
  const groups: Group[] = [];
  for (const item of items) {
    const last = groups.at(-1);
    if (last && last.device === item.device && last.attempt === item.attempt) last.items.push(item);
    else groups.push({ device: item.device, attempt: item.attempt, items: [item] });
  }
  return groups;
}

/**
 * "Pixel 8 · 14 · R5CT70XYZ1A": the device the run was on as the agent reported it, else what the plan asked. An
 * artifact names its device entry (`device` is the entry's position), not its shard: a sharded entry's files are
 * one group, named by what the plan asked and its shards ("Pixel 8 · 3 shards"); each file's name says its device.
 */
function deviceName(devices: readonly DeviceRun[], position: number): string {
  const entry = deviceEntries(devices)[position];
  const run = entry?.runs[0];
  const text = (value: unknown) => (typeof value === "string" && value ? value : undefined);
  const sharded = (entry?.runs.length ?? 0) > 1;
  const claimed = sharded ? undefined : run?.claimed_device;
  if (sharded) {
    return [
      text(run?.device?.model) ?? text(run?.device?.platform),
      text(run?.device?.os_version),
      `${entry?.runs.length} shards`,
    ]
      .filter(Boolean)
      .join(" · ");
  }
  const parts = claimed
    ? [text(claimed.model), text(claimed.os_version), text(claimed.serial)]
    : [text(run?.device?.model), text(run?.device?.os_version)];
  const named = parts.filter(Boolean).join(" · ");
  return named || (run?.device ? `device ${position + 1}` : "Agent host");
}

/** Groups of more artifacts than this start closed: 200 failures make 600 rows. */
const openUpTo = 40;

function ArtifactRow({ runId, artifact }: { runId: string; artifact: Artifact }) {
  const [previewing, setPreviewing] = useState(false);
  const kind = artifactKind(artifact.name, artifact.content_type);
  const url = artifactUrl(runId, artifact.name, artifact);
  return (
    <li className="space-y-2 py-2">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
        <span className="min-w-0 basis-full font-mono text-xs break-all sm:flex-1 sm:basis-0">
          {artifact.name}
        </span>
        <span className="text-xs text-muted">
          {artifact.content_type} · {formatBytes(artifact.size_bytes)}
        </span>
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
          download={artifact.name.slice(artifact.name.lastIndexOf("/") + 1)}
          className="rounded-md border border-line px-2 py-0.5 text-xs hover:bg-sunken"
        >
          Download<span className="sr-only"> {artifact.name}</span>
        </a>
      </div>
      {previewing && <ArtifactPreview url={url} name={artifact.name} kind={kind} />}
    </li>
  );
}

/** Every file the agents kept for the run, each with a download link and, for pictures, videos and text, a preview. */
export function ArtifactsPanel({
  runId,
  devices,
  live,
}: {
  runId: string;
  devices: DeviceRun[];
  live: boolean;
}) {
  const artifacts = useQuery(artifactsQuery(runId, live));
  const items = artifacts.data ?? [];
  const groups = grouped(items);
  return (
    <section aria-labelledby="artifacts" className="space-y-2">
      <h2 id="artifacts" className="text-lg font-semibold">
        Artifacts{artifacts.data && artifacts.data.length > 0 && ` (${artifacts.data.length})`}
      </h2>
      {artifacts.error && <ProblemMessage error={artifacts.error} />}
      {artifacts.isPending && <p className="text-sm text-muted">Loading artifacts…</p>}
      {artifacts.data?.length === 0 && (
        <p className="text-sm text-muted">
          No artifacts{live ? " yet" : ""}: agents upload them as a device run ends.
        </p>
      )}
      {groups.map((group) => (
        <details
          key={`${group.device}:${group.attempt}`}
          open={items.length <= openUpTo}
          className="rounded-lg border border-line bg-surface px-3 py-2"
        >
          <summary className="cursor-pointer text-sm font-medium">
            {deviceName(devices, group.device)} · attempt {group.attempt}{" "}
            <span className="font-normal text-muted">
              ({group.items.length} {group.items.length === 1 ? "file" : "files"})
            </span>
          </summary>
          <ul className="divide-y divide-line">
            {group.items.map((artifact) => (
              <ArtifactRow key={artifact.name} runId={runId} artifact={artifact} />
            ))}
          </ul>
        </details>
      ))}
    </section>
  );
}
