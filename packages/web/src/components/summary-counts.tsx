import type { Summary } from "../api/types.ts";

/** "12 passed · 2 failed · 1 flaky": the counts that matter, zeros left out but for passed. */
export function SummaryCounts({ summary }: { summary: Summary }) {
  if (summary.tests === 0) return <span className="text-muted">no tests</span>;
  return (
    <span className="tabular-nums whitespace-nowrap">
      <span className="text-emerald-700 dark:text-emerald-400">{summary.passed} passed</span>
      {summary.failed > 0 && (
        <span className="text-red-700 dark:text-red-400"> · {summary.failed} failed</span>
      )}
      {summary.flaky > 0 && (
        <span className="text-amber-700 dark:text-amber-400"> · {summary.flaky} flaky</span>
      )}
      {summary.skipped > 0 && <span className="text-muted"> · {summary.skipped} skipped</span>}
    </span>
  );
}
