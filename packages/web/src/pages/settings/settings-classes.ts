/** The settings' buttons: a quiet one for row actions, the accent one for what a form is for. */
export const quietButton =
  "inline-flex h-8 items-center rounded-md border border-line px-3 text-sm hover:bg-sunken disabled:cursor-not-allowed disabled:opacity-50";
export const primaryButton =
  "inline-flex h-9 items-center rounded-md bg-accent px-3 text-sm font-medium text-accent-ink hover:opacity-90 disabled:opacity-50";
export const dangerButton = `${quietButton} text-red-700 dark:text-red-300`;
