import { useQuery } from "@tanstack/react-query";
import { type Artifact, artifactsQuery } from "../../api/artifacts.ts";
import type { DeviceRun } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { ArtifactRow } from "./artifact-row.tsx";
import { deviceEntryName } from "./device-entry-name.ts";
import { deviceFileKind } from "./device-files.ts";

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

/** Groups of more artifacts than this start closed: 200 failures make 600 rows. */
const openUpTo = 40;

/**
 * Every file the agents kept for the run, each with a download link and, for pictures, videos and text, a preview;
 * but the files copied off the devices (`pulled/…`, `coverage/…`), which have sections of their own
 * (device-files-sections.tsx).
 */
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
  const all = artifacts.data ?? [];
  const items = all.filter((artifact) => deviceFileKind(artifact.name) === undefined);
  const groups = grouped(items);
  return (
    <section aria-labelledby="artifacts" className="space-y-2">
      <h2 id="artifacts" className="text-lg font-semibold">
        Artifacts{items.length > 0 && ` (${items.length})`}
      </h2>
      {artifacts.error && <ProblemMessage error={artifacts.error} />}
      {artifacts.isPending && <p className="text-sm text-muted">Loading artifacts…</p>}
      {artifacts.data && items.length === 0 && (
        <p className="text-sm text-muted">
          {all.length > 0
            ? "No other artifacts: the files copied off the devices are listed above."
            : `No artifacts${live ? " yet" : ""}: agents upload them as a device run ends.`}
        </p>
      )}
      {groups.map((group) => (
        <details
          key={`${group.device}:${group.attempt}`}
          open={items.length <= openUpTo}
          className="rounded-lg border border-line bg-surface px-3 py-2"
        >
          <summary className="cursor-pointer text-sm font-medium">
            {deviceEntryName(devices, group.device)} · attempt {group.attempt}{" "}
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
