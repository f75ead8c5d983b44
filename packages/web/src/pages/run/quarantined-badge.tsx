/**
 * Says that a test is quarantined: its failures do not fail the run. In words, like the status chips, with the
 * who and why in its title when known.
 */
export function QuarantinedBadge({ title }: { title?: string }) {
  return (
    <span
      title={title ?? "Quarantined: its failures do not fail the run"}
      className="inline-flex items-center rounded-full bg-violet-100 px-2 py-0.5 text-xs font-medium whitespace-nowrap text-violet-900 dark:bg-violet-900 dark:text-violet-100"
    >
      Quarantined
    </span>
  );
}
