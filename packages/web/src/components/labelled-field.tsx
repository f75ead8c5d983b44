import type { ReactNode } from "react";

/**
 * A form control with its label above it, the label naming it (`htmlFor={id}`) for screen readers. `children` is
 * the control (with `id`) and whatever follows it (help, messages). Compact by default, as filters and the
 * settings' forms are; `className` and `labelClassName` replace the defaults (the sign-in page's larger labels).
 */
export function LabelledField({
  id,
  label,
  className = "flex flex-col gap-1",
  labelClassName = "text-xs text-muted",
  children,
}: {
  id: string;
  label: ReactNode;
  className?: string;
  labelClassName?: string;
  children: ReactNode;
}) {
  return (
    <div className={className}>
      <label htmlFor={id} className={labelClassName}>
        {label}
      </label>
      {children}
    </div>
  );
}
