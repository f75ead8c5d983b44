import { sessionLabel } from "../../format/session-label.ts";

/**
 * "Appium session", where a run would name its test plan: a WebDriver session (API.md §12) has none, and lists
 * mark it so that it is told apart from the runs at a glance.
 */
export function SessionTag() {
  return (
    <span className="inline-block rounded-md border border-line px-1.5 py-px text-xs whitespace-nowrap text-muted">
      {sessionLabel}
    </span>
  );
}
