import type { Summary } from "../api/types.ts";

/**
 * "12 passed · 2 failed · 1 quarantined · 1 flaky" (the quarantined failure is one of the failed, and did not fail
 * the run): the counts that matter, zeros left out but for passed. Each count stays on
 * one line; a narrow column (a phone) breaks between them.
 */
export function SummaryCounts({ summary }: { summary: Summary }) {
  if (summary.tests === 0) return <span className="text-muted">no tests</span>;
  const parts = [
    { count: summary.passed, label: "passed", tone: "text-emerald-700 dark:text-emerald-400", always: true },
    { count: summary.failed, label: "failed", tone: "text-red-700 dark:text-red-400", always: false },
    // Of the failed ones, those of quarantined tests: they did not fail the run.
    {
      count: summary.quarantined_failures ?? 0,
      label: "quarantined",
      tone: "text-violet-700 dark:text-violet-300",
      always: false,
    },
    { count: summary.flaky, label: "flaky", tone: "text-amber-700 dark:text-amber-400", always: false },
    { count: summary.skipped, label: "skipped", tone: "text-muted", always: false },
  ].filter((part) => part.always || part.count > 0);
  return (
    <span className="tabular-nums">
      {parts.map((part, index) => (
        <span key={part.label} className={`whitespace-nowrap ${part.tone}`}>
          {index > 0 && " · "}
          {part.count} {part.label}
        </span>
      ))}
    </span>
  );
}
