import type { ReactNode } from "react";

/** One labelled fact of a page's header (a run's, a plan's): a `dt`/`dd` pair inside a `dl`. */
export function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-muted">{label}</dt>
      <dd className="break-words">{children}</dd>
    </div>
  );
}
