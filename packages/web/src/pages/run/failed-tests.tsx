import { useQuery } from "@tanstack/react-query";
import { failedTestsQuery } from "../../api/executions.ts";
import type { TestCase } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { StatusChip } from "../../components/status-chip.tsx";
import { deviceLabel } from "./device-label.ts";

function FailedTest({ test }: { test: TestCase }) {
  return (
    <li className="space-y-2 rounded-lg border border-red-300 bg-surface p-3 dark:border-red-900">
      <div className="flex flex-wrap items-center gap-2">
        <StatusChip status={test.status} />
        {test.flaky && <StatusChip status="flaky" />}
        <span className="font-medium break-all">{test.name}</span>
        <span className="text-sm break-all text-muted">{test.classname}</span>
      </div>
      <div className="text-xs text-muted">
        {deviceLabel(test)} · attempt {test.attempt}
        {test.quarantined && " · quarantined (does not fail the run)"}
      </div>
      {test.message && <p className="text-sm break-words whitespace-pre-wrap">{test.message}</p>}
      {test.stack_trace && (
        <details>
          <summary className="cursor-pointer text-sm text-accent">Stack trace</summary>
          <pre className="mt-2 max-h-80 overflow-auto rounded bg-sunken p-2 font-mono text-xs">
            {test.stack_trace}
          </pre>
        </details>
      )}
    </li>
  );
}

/** The failures come first on a run's page: they are what the reader came for. */
export function FailedTests({ runId, live }: { runId: string; live: boolean }) {
  const failed = useQuery(failedTestsQuery(runId, live));
  return (
    <section aria-labelledby="failed-tests" className="space-y-2">
      <h2 id="failed-tests" className="text-lg font-semibold">
        Failed tests{failed.data && failed.data.length > 0 && ` (${failed.data.length})`}
      </h2>
      {failed.error && <ProblemMessage error={failed.error} />}
      {failed.data?.length === 0 && <p className="text-sm text-muted">No test failed{live && " so far"}.</p>}
      {failed.data && failed.data.length > 0 && (
        <ul className="space-y-3">
          {failed.data.map((test) => (
            <FailedTest key={`${test.id}:${test.device.position}:${test.shard}`} test={test} />
          ))}
        </ul>
      )}
    </section>
  );
}
