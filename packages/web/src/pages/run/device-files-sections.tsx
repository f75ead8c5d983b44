import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { type Artifact, artifactsQuery } from "../../api/artifacts.ts";
import type { DeviceRun } from "../../api/types.ts";
import { shardRunName } from "./device-entry-name.ts";
import { type DeviceFileKind, deviceFileGroups, fileTree } from "./device-files.ts";
import { FileTree, filesAndSize, openUpTo } from "./file-tree.tsx";
import { Disclosure } from "./lazy-disclosure.tsx";

const sections: Record<DeviceFileKind, { title: string; note: ReactNode }> = {
  pulled: {
    title: "Files pulled from the device",
    note: (
      <>
        What the step's <code>pull</code> paths held when each shard's run ended (also when it failed), copied
        off the device with adb pull.
      </>
    ),
  },
  coverage: {
    title: "Coverage",
    note: (
      <>
        JaCoCo execution data the test runner wrote for <code>coverage: true</code>: one file per shard, one
        per test under the orchestrator. JaCoCo's report task turns them into a report against the app's
        classes.
      </>
    ),
  },
};

/**
 * One kind of the files copied off the devices (API.md §14), shard by shard, each shard's as a file tree with
 * sizes and download links; nothing at all when the run has none of that kind.
 */
function DeviceFilesSection({
  kind,
  runId,
  devices,
  items,
}: {
  kind: DeviceFileKind;
  runId: string;
  devices: readonly DeviceRun[];
  items: readonly Artifact[];
}) {
  const groups = deviceFileGroups(items, kind);
  if (groups.length === 0) return null;
  const { title, note } = sections[kind];
  const count = groups.reduce((sum, group) => sum + group.files.length, 0);
  const headingId = `device-files-${kind}`;
  return (
    <section aria-labelledby={headingId} className="space-y-2">
      <h2 id={headingId} className="text-lg font-semibold">
        {title} ({count})
      </h2>
      <p className="text-sm text-muted">{note}</p>
      {groups.map((group) => {
        const tree = fileTree(group.files);
        return (
          <Disclosure
            key={`${group.device}:${group.shard}:${group.attempt}`}
            startsOpen={tree.files.length <= openUpTo}
            className="rounded-lg border border-line bg-surface px-3 py-2"
            summary={
              <summary className="cursor-pointer text-sm font-medium">
                {shardRunName(devices, group.device, group.shard, group.attempt)}{" "}
                <span className="font-normal text-muted">
                  ({filesAndSize(group.files.length, group.bytes)})
                </span>
              </summary>
            }
          >
            {() => <FileTree runId={runId} folder={tree} />}
          </Disclosure>
        );
      })}
    </section>
  );
}

/**
 * The files the agents copied off the devices after the run, apart from the captures tied to test cases: what the
 * plan's `pull` paths held, then the coverage files. They come with the run's other artifacts (one request,
 * shared with the Artifacts section).
 */
export function DeviceFilesSections({
  runId,
  devices,
  live,
}: {
  runId: string;
  devices: readonly DeviceRun[];
  live: boolean;
}) {
  const artifacts = useQuery(artifactsQuery(runId, live));
  const items = artifacts.data ?? [];
  return (
    <>
      <DeviceFilesSection kind="pulled" runId={runId} devices={devices} items={items} />
      <DeviceFilesSection kind="coverage" runId={runId} devices={devices} items={items} />
    </>
  );
}
