import type { ReactNode } from "react";

/**
 * A table's column header, as every table of the dashboard draws it, scoped to its column for screen readers.
 * `className` adds to it (a column that steps aside on small screens: "hidden sm:table-cell").
 */
export function ColumnHeader({ children, className }: { children?: ReactNode; className?: string }) {
  return (
    <th scope="col" className={className ? `px-3 py-2 font-medium ${className}` : "px-3 py-2 font-medium"}>
      {children}
    </th>
  );
}

/** The header of a column of buttons (or links): named for screen readers only. */
export function ActionsColumnHeader({ label = "Actions" }: { label?: string }) {
  return (
    <ColumnHeader>
      <span className="sr-only">{label}</span>
    </ColumnHeader>
  );
}
