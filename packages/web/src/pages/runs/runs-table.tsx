import { Link } from "@tanstack/react-router";
import type { Execution, TestPlan } from "../../api/types.ts";
import { ColumnHeader } from "../../components/column-header.tsx";
import { StatusChip } from "../../components/status-chip.tsx";
import { SummaryCounts } from "../../components/summary-counts.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { formatDuration, runDuration } from "../../format/duration.ts";
import { sessionLabel } from "../../format/session-label.ts";
import { RunPlan } from "./run-plan.tsx";
import { SessionTag } from "./session-tag.tsx";

/** A run's test counts; a session has no tests of its own (its suite's results are its client's). */
function TestCounts({ run }: { run: Execution }) {
  if (run.kind === "session") return <span className="text-muted">—</span>;
  return <SummaryCounts summary={run.summary} />;
}

/** One row per run; on a phone the columns step aside and the name carries the plan and the counts. */
export function RunsTable(props: {
  runs: Execution[];
  plans: TestPlan[] | undefined;
  plansSettled: boolean;
}) {
  const { runs } = props;
  const byId = new Map(props.plans?.map((plan) => [plan.id, plan]));
  // A session has no plan to link to (API.md §12): it says what it is, and its name when the app column does not.
  const planOf = (run: Execution) =>
    run.test_plan_id === null ? (
      <span className="break-words">
        <SessionTag />
        {run.package_name !== null && run.name && <span className="ml-1.5">{run.name}</span>}
      </span>
    ) : (
      <RunPlan planId={run.test_plan_id} listed={byId.get(run.test_plan_id)} lookUp={props.plansSettled} />
    );
  return (
    <div className="overflow-x-auto rounded-lg border border-line bg-surface">
      <table className="w-full text-sm">
        <thead className="border-b border-line text-left text-muted">
          <tr>
            <ColumnHeader>Status</ColumnHeader>
            <ColumnHeader>App and version</ColumnHeader>
            <ColumnHeader className="hidden sm:table-cell">Test plan</ColumnHeader>
            <ColumnHeader className="hidden md:table-cell">Branch</ColumnHeader>
            <ColumnHeader className="hidden sm:table-cell">Tests</ColumnHeader>
            <ColumnHeader className="hidden sm:table-cell">Duration</ColumnHeader>
            <ColumnHeader className="hidden lg:table-cell">Created</ColumnHeader>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => {
            const took = runDuration(run.started_at, run.finished_at);
            return (
              <tr key={run.id} className="border-b border-line last:border-0 hover:bg-sunken">
                <td className="px-3 py-2">
                  <StatusChip status={run.status} />
                </td>
                <td className="px-3 py-2">
                  <Link
                    to="/runs/$runId"
                    params={{ runId: run.id }}
                    className="font-medium text-accent hover:underline"
                  >
                    {run.package_name === null ? (
                      // A session without a registered app: its name is what people know it by.
                      (run.name ?? sessionLabel)
                    ) : (
                      <>
                        {run.package_name} {run.version}
                      </>
                    )}
                  </Link>
                  <div className="text-xs break-all text-muted">{run.id}</div>
                  {/* On a phone the plan, the counts and the duration ride under the name, their columns hidden. */}
                  <div className="mt-1 text-xs sm:hidden">{planOf(run)}</div>
                  <div className="mt-1 text-xs sm:hidden">
                    {run.kind === "session" ? (
                      took !== undefined && <span className="text-muted">{formatDuration(took)}</span>
                    ) : (
                      <>
                        <SummaryCounts summary={run.summary} />
                        {took !== undefined && <span className="text-muted"> · {formatDuration(took)}</span>}
                      </>
                    )}
                  </div>
                </td>
                <td className="hidden px-3 py-2 sm:table-cell">{planOf(run)}</td>
                <td className="hidden px-3 py-2 md:table-cell">
                  {run.ci?.branch ? (
                    <code className="text-xs">{run.ci.branch}</code>
                  ) : (
                    <span className="text-muted">—</span>
                  )}
                </td>
                <td className="hidden px-3 py-2 sm:table-cell">
                  <TestCounts run={run} />
                </td>
                <td className="hidden px-3 py-2 tabular-nums sm:table-cell">
                  {took === undefined ? <span className="text-muted">—</span> : formatDuration(took)}
                </td>
                <td className="hidden px-3 py-2 whitespace-nowrap lg:table-cell">
                  <Timestamp value={run.created_at} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
