import { type ReactNode, useId } from "react";
import { filterControl } from "./control-classes.ts";
import { LabelledField } from "./labelled-field.tsx";

/**
 * A filter bar's select with its label above it (the runs' and the test plans' filters). The label names the
 * select for screen readers; `onChange` gets the chosen option's value, "" for an "all" option.
 */
export function LabelledSelect({
  label,
  value,
  onChange,
  children,
  disabled = false,
  title,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  children: ReactNode;
  /** Greyed out; `title` says why (a version filter waits for an app). */
  disabled?: boolean;
  title?: string | undefined;
}) {
  const id = useId();
  return (
    <LabelledField id={id} label={label}>
      <select
        id={id}
        className={`${filterControl} max-w-60 disabled:opacity-50`}
        value={value}
        disabled={disabled}
        title={title}
        onChange={(event) => onChange(event.target.value)}
      >
        {children}
      </select>
    </LabelledField>
  );
}
