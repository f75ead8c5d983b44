import type { ReactNode } from "react";

/**
 * A list's table from the `sm` width up (below it the page shows the same rows as cards): outlined, scrolling
 * sideways when its columns do not fit. `head` is the header row's cells (ColumnHeader), `children` the rows.
 * `surface` fills it with the surface colour, as a page's lists are; a list inside a card (a webhook's
 * deliveries) leaves it off.
 */
export function WideTable({
  caption,
  head,
  surface = true,
  children,
}: {
  /** Read by screen readers only. */
  caption?: ReactNode;
  head: ReactNode;
  surface?: boolean;
  children: ReactNode;
}) {
  return (
    <div
      className={`hidden overflow-x-auto rounded-lg border border-line ${surface ? "bg-surface " : ""}sm:block`}
    >
      <table className="w-full text-left text-sm">
        {caption !== undefined && <caption className="sr-only">{caption}</caption>}
        <thead className="border-b border-line text-xs text-muted">
          <tr>{head}</tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
