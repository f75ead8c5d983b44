/** A filter bar's select or input: compact, sized to its content. */
export const filterControl = "h-9 rounded-md border border-line bg-surface px-2 text-sm";

/** A form's input, select or textarea: full width, outlined red while the API refuses its value. */
export const formControl =
  "h-9 w-full rounded-md border border-line bg-surface px-2 text-sm aria-invalid:border-red-600 dark:aria-invalid:border-red-400";
