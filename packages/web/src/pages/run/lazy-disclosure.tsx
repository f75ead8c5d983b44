import { type ReactNode, useState } from "react";

/**
 * A disclosure whose contents exist only while it is open: a closed folder of 3,000 pulled files costs the page
 * one row, not 3,000 it does not show.
 */
export function Disclosure({
  summary,
  startsOpen,
  className,
  children,
}: {
  summary: ReactNode;
  startsOpen: boolean;
  className?: string;
  children: () => ReactNode;
}) {
  const [open, setOpen] = useState(startsOpen);
  return (
    <details open={open} onToggle={(event) => setOpen(event.currentTarget.open)} className={className}>
      {summary}
      {open && children()}
    </details>
  );
}
