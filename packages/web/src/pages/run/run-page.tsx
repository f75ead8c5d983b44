import { useQuery } from "@tanstack/react-query";
import { executionQuery } from "../../api/executions.ts";
import { finalStatuses } from "../../api/types.ts";
import { runRoute } from "../../app/router.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { SessionPage } from "../session/session-page.tsx";
import { ArtifactsPanel } from "./artifacts-panel.tsx";
import { DeviceFilesSections } from "./device-files-sections.tsx";
import { DeviceRuns } from "./device-runs.tsx";
import { FailedTests } from "./failed-tests.tsx";
import { RunHeader } from "./run-header.tsx";
import { RunLog } from "./run-log.tsx";
import { TestsTable } from "./tests-table.tsx";

/**
 * One run: what it ran, on which devices, what failed and why, every test, its log and the files copied off the
 * devices; live until it ends. A WebDriver session (API.md §12) has its own page at the same address: no plan or
 * tests, but commands.
 */
export function RunPage() {
  const { runId } = runRoute.useParams();
  const run = useQuery(executionQuery(runId));

  if (run.error) return <ProblemMessage error={run.error} />;
  if (!run.data) return <p className="text-muted">Loading the run…</p>;
  if (run.data.kind === "session") return <SessionPage session={run.data} />;
  const live = !finalStatuses.has(run.data.status);
  return (
    <div className="space-y-8">
      <RunHeader run={run.data} />
      <DeviceRuns devices={run.data.devices} />
      <FailedTests runId={runId} live={live} />
      <TestsTable runId={runId} live={live} />
      <RunLog runId={runId} live={live} />
      <DeviceFilesSections runId={runId} devices={run.data.devices} live={live} />
      <ArtifactsPanel runId={runId} devices={run.data.devices} live={live} />
    </div>
  );
}
