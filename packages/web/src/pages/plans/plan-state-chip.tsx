import type { TestPlanState } from "../../api/plans.ts";

const tones: Record<TestPlanState, string> = {
  active: "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100",
  archived: "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200",
  deleted: "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100",
};

/** A plan's state, in words (colour is never the only signal). */
export function PlanStateChip({ state }: { state: TestPlanState }) {
  return (
    <span className={`rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ${tones[state]}`}>
      {state}
    </span>
  );
}
