import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { planQuery } from "../../api/catalog.ts";
import { junitUrl } from "../../api/executions.ts";
import type { Execution } from "../../api/types.ts";
import { CiFacts } from "../../components/ci-facts.tsx";
import { Fact } from "../../components/fact.tsx";
import { StatusChip } from "../../components/status-chip.tsx";
import { SummaryCounts } from "../../components/summary-counts.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { formatDuration, runDuration } from "../../format/duration.ts";
import { sessionLabel } from "../../format/session-label.ts";
import { RunActions } from "./run-actions.tsx";
import { TriggeredBy } from "./triggered-by.tsx";

/**
 * What ran (app, version, plan), what triggered it (CI), when and for how long, and how it came out. A WebDriver
 * session (API.md §12) has no plan, and no app or version when it names no registered app: it says what it is.
 */
export function RunHeader({ run }: { run: Execution }) {
  const planId = run.test_plan_id;
  const plan = useQuery({ ...planQuery(planId ?? ""), enabled: planId !== null });
  const took = runDuration(run.started_at, run.finished_at);
  const ci = run.ci;
  return (
    <header className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold break-all">
          {run.package_name === null ? (
            (run.name ?? sessionLabel)
          ) : (
            <>
              {run.package_name} {run.version !== null && <span className="text-muted">{run.version}</span>}
            </>
          )}
        </h1>
        <StatusChip status={run.status} />
        <div className="ml-auto flex flex-wrap items-center gap-2">
          <RunActions run={run} />
          <a
            href={junitUrl(run.id)}
            download={`${run.id}-junit.xml`}
            className="rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken"
          >
            Download JUnit XML
          </a>
        </div>
      </div>
      {run.waiting_reason && (
        <p
          role="status"
          className="rounded-md bg-amber-50 p-3 text-sm text-amber-900 dark:bg-amber-950 dark:text-amber-100"
        >
          Waiting: {run.waiting_reason.detail}
        </p>
      )}
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 rounded-lg border border-line bg-surface p-4 text-sm sm:grid-cols-3 lg:grid-cols-4">
        {planId === null ? (
          <Fact label="Kind">{sessionLabel}</Fact>
        ) : (
          <Fact label="Test plan">
            <Link to="/runs" search={{ plan: planId }} className="text-accent hover:underline">
              {plan.data?.name ?? planId}
            </Link>
            {plan.data && plan.data.state !== "active" && (
              <span className="text-muted"> ({plan.data.state})</span>
            )}
          </Fact>
        )}
        <Fact label="Tests">
          <SummaryCounts summary={run.summary} />
        </Fact>
        <Fact label="Duration">{took === undefined ? "not started" : formatDuration(took)}</Fact>
        <Fact label="Run">
          <code className="text-xs break-all">{run.id}</code>
        </Fact>
        <Fact label="Triggered by">
          <TriggeredBy by={run.triggered_by} />
        </Fact>
        <Fact label="Created">
          <Timestamp value={run.created_at} />
        </Fact>
        <Fact label="Started">
          <Timestamp value={run.started_at} />
        </Fact>
        <Fact label="Finished">
          <Timestamp value={run.finished_at} />
        </Fact>
        <CiFacts ci={ci} />
      </dl>
    </header>
  );
}
