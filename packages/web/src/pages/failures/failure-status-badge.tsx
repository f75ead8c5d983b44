import type { FailureGroup } from "./failures-api.ts";

// Colour is never the only signal: the badge says its status in words.
const tones: Record<FailureGroup["status"], string> = {
  new: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
  ongoing: "bg-amber-100 text-amber-900 dark:bg-amber-900 dark:text-amber-100",
  fixed: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
};

/** new (first seen in the last 24 h), ongoing, or fixed (passed in the plan's last 3 runs since). */
export function FailureStatusBadge({ status }: { status: FailureGroup["status"] }) {
  return (
    <span className={`rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ${tones[status]}`}>
      {status}
    </span>
  );
}
