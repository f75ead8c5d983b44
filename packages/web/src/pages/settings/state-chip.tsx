/** Enabled or disabled, said in words (colour is never the only signal). */
export function StateChip({ disabledAt }: { disabledAt: string | null }) {
  return disabledAt ? (
    <span className="rounded-full bg-zinc-200 px-2 py-0.5 text-xs font-medium text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200">
      disabled
    </span>
  ) : (
    <span className="rounded-full bg-emerald-100 px-2 py-0.5 text-xs font-medium text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100">
      enabled
    </span>
  );
}
