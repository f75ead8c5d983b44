import type { ExecutionStatus, TestCaseStatus } from "../api/types.ts";

type Status = ExecutionStatus | TestCaseStatus | "flaky";

// Colour is never the only signal: the chip always says its status in words.
const tones: Record<Status, string> = {
  queued: "bg-slate-200 text-slate-800 dark:bg-slate-700 dark:text-slate-100",
  running: "bg-sky-100 text-sky-900 dark:bg-sky-900 dark:text-sky-100",
  passed: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  failed: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
  errored: "bg-orange-100 text-orange-900 dark:bg-orange-900 dark:text-orange-100",
  cancelled: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200",
  skipped: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200",
  flaky: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
};

export function StatusChip({ status }: { status: Status }) {
  return (
    <span
      className={`inline-flex items-center gap-1 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ${tones[status]}`}
    >
      {status === "running" && (
        <span aria-hidden className="size-1.5 animate-pulse rounded-full bg-current" />
      )}
      {status}
    </span>
  );
}
