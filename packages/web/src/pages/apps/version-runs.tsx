import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { runsPerVersion, versionRunsQuery } from "../../api/apps.ts";
import { StatusChip } from "../../components/status-chip.tsx";
import { SummaryCounts } from "../../components/summary-counts.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { sessionLabel } from "../../format/session-label.ts";
import { SessionTag } from "../runs/session-tag.tsx";
import { type AppRuns, mergeRuns, runsFromApp } from "./version-runs-source.ts";

/**
 * A version's newest runs. Most come from the app's newest runs, read once for the whole page (and live); only a
 * version those do not cover (fewer than five of its runs among them while the app has older ones) asks for its
 * own.
 */
export function VersionRuns({
  packageName,
  version,
  appRuns,
  planNames,
}: {
  packageName: string;
  version: string;
  appRuns: AppRuns;
  planNames: ReadonlyMap<string, string>;
}) {
  const fromApp = runsFromApp(appRuns, version, runsPerVersion);
  const own = useQuery(versionRunsQuery(packageName, version, fromApp !== undefined && !fromApp.complete));

  if (fromApp === undefined || (!fromApp.complete && own.isPending)) {
    return <p className="text-sm text-muted">Loading runs…</p>;
  }
  const runs = fromApp.complete ? fromApp.runs : mergeRuns(fromApp.runs, own.data?.items ?? []);
  const shown = runs.slice(0, runsPerVersion);
  const more = runs.length > runsPerVersion || (!fromApp.complete && Boolean(own.data?.next_cursor));

  if (shown.length === 0) {
    return <p className="text-sm text-muted">No runs of this version yet.</p>;
  }
  return (
    <div className="space-y-2">
      <ul className="divide-y divide-line rounded-md border border-line">
        {shown.map((run) => (
          <li key={run.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2 text-sm">
            <StatusChip status={run.status} />
            <Link
              to="/runs/$runId"
              params={{ runId: run.id }}
              className="min-w-0 font-medium break-words text-accent hover:underline"
            >
              {run.test_plan_id === null
                ? (run.name ?? sessionLabel)
                : (planNames.get(run.test_plan_id) ?? run.test_plan_id)}
            </Link>
            {run.kind === "session" ? (
              <SessionTag />
            ) : (
              <span className="text-xs">
                <SummaryCounts summary={run.summary} />
              </span>
            )}
            {run.ci?.branch && <code className="text-xs text-muted">{run.ci.branch}</code>}
            <span className="ml-auto text-xs whitespace-nowrap text-muted">
              <Timestamp value={run.created_at} />
            </span>
          </li>
        ))}
      </ul>
      {more && (
        <p className="text-xs text-muted">
          The newest {runsPerVersion} runs of this version.{" "}
          <Link to="/runs" search={{ app: packageName, version }} className="text-accent underline">
            All runs of {version}
          </Link>
        </p>
      )}
      {own.error && <p className="text-xs text-muted">Older runs of this version could not be read.</p>}
    </div>
  );
}
