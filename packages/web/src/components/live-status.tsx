import type { ReactNode } from "react";

/** What a section just did (created, rotated, sent again…), said to screen readers as it changes; not shown. */
export function LiveStatus({ children }: { children: ReactNode }) {
  return (
    <p role="status" aria-live="polite" className="sr-only">
      {children}
    </p>
  );
}
