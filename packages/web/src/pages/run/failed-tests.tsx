import { useQuery } from "@tanstack/react-query";
import { allTestsQuery, executionQuery, failedTestsQuery } from "../../api/executions.ts";
import { type TestHistory, testHistoryQuery } from "../../api/test-history.ts";
import type { TestCase } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { StatusChip } from "../../components/status-chip.tsx";
import { deviceLabel } from "./device-label.ts";
import { FailureEvidence } from "./failure-evidence.tsx";
import { QuarantineControl } from "./quarantine-control.tsx";
import { QuarantinedBadge } from "./quarantined-badge.tsx";
import { shardCounts } from "./shards.ts";
import { TestHistoryLine } from "./test-history-line.tsx";
import { hasTries, passedOnRetry } from "./test-tries.ts";
import { TestTriesList } from "./test-tries-list.tsx";

function FailedTest({
  runId,
  planId,
  test,
  live,
  history,
  shards,
}: {
  runId: string;
  planId: string | undefined;
  test: TestCase;
  live: boolean;
  /** The plan's history of its tests; undefined while it loads. */
  history: ReadonlyMap<string, TestHistory> | undefined;
  /** The run's shards per device entry, for the device line. */
  shards: readonly number[] | undefined;
}) {
  const quarantine = history?.get(test.id)?.quarantine;
  // A test that passed on a retry is shown with its tries; the captures of its failing try are among them.
  const passed = test.status === "passed";
  return (
    <li
      className={`space-y-2 rounded-lg border bg-surface p-3 ${passed ? "border-amber-300 dark:border-amber-800" : "border-red-300 dark:border-red-900"}`}
    >
      <div className="flex flex-wrap items-center gap-2">
        <StatusChip status={test.status} />
        {test.flaky && <StatusChip status="flaky" />}
        {test.quarantined && <QuarantinedBadge />}
        <span className="font-medium break-all">{test.name}</span>
        <span className="text-sm break-all text-muted">{test.classname}</span>
      </div>
      <div className="text-xs text-muted">
        {deviceLabel(test, shards)} · attempt {test.attempt}
        {test.quarantined && " · quarantined: does not fail the run"}
      </div>
      {test.quarantined && quarantine && (
        <p className="text-xs text-violet-900 dark:text-violet-200">
          Quarantined by {quarantine.quarantined_by} on {quarantine.quarantined_at.slice(0, 10)}:{" "}
          <span className="break-words">{quarantine.reason}</span>
        </p>
      )}
      {history && <TestHistoryLine history={history.get(test.id)} run={{ id: runId, finished: !live }} />}
      {test.message && <p className="text-sm break-words whitespace-pre-wrap">{test.message}</p>}
      {test.stack_trace && (
        <details>
          <summary className="cursor-pointer text-sm text-accent">Stack trace</summary>
          <pre className="mt-2 max-h-80 overflow-auto rounded bg-sunken p-2 font-mono text-xs">
            {test.stack_trace}
          </pre>
        </details>
      )}
      {hasTries(test) && <TestTriesList runId={runId} test={test} live={live} />}
      {!passed && <FailureEvidence runId={runId} test={test} live={live} />}
      {planId !== undefined && <QuarantineControl test={test} planId={planId} />}
    </li>
  );
}

/**
 * The failures come first on a run's page: they are what the reader came for. The tests that passed only on a
 * retry follow them ("Passed on retry"): they did not fail the run, but they are what makes a suite flaky.
 */
export function FailedTests({ runId, live }: { runId: string; live: boolean }) {
  const failed = useQuery(failedTestsQuery(runId, live));
  // The flaky ones come from the table's query of every test (the API filters by status only): the same request.
  const flaky = passedOnRetry(useQuery(allTestsQuery(runId, live)).data ?? []);
  // The run is already loaded by its page; its plan's test history is one request for every failure, asked for
  // only when something failed.
  const run = useQuery(executionQuery(runId)).data;
  // A session (API.md §12) has no plan, so no plan's test history either.
  const planId = run?.test_plan_id ?? undefined;
  const shards = run && shardCounts(run.devices);
  const history = useQuery({
    ...testHistoryQuery(planId ?? "", !live),
    enabled: planId !== undefined && (failed.data?.length ?? 0) + flaky.length > 0,
  });
  const failedTest = (test: TestCase) => (
    <FailedTest
      key={`${test.id}:${test.device.position}:${test.shard}`}
      runId={runId}
      planId={planId}
      test={test}
      live={live}
      history={history.data}
      shards={shards}
    />
  );
  return (
    <section aria-labelledby="failed-tests" className="space-y-2">
      <h2 id="failed-tests" className="text-lg font-semibold">
        Failed tests{failed.data && failed.data.length > 0 && ` (${failed.data.length})`}
      </h2>
      {failed.error && <ProblemMessage error={failed.error} />}
      {failed.data?.length === 0 && <p className="text-sm text-muted">No test failed{live && " so far"}.</p>}
      {failed.data && failed.data.length > 0 && <ul className="space-y-3">{failed.data.map(failedTest)}</ul>}
      {flaky.length > 0 && (
        <>
          <h3 id="passed-on-retry" className="pt-2 font-semibold">
            Passed on retry ({flaky.length})
          </h3>
          <ul aria-labelledby="passed-on-retry" className="space-y-3">
            {flaky.map(failedTest)}
          </ul>
        </>
      )}
    </section>
  );
}
