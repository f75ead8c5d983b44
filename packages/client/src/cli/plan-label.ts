import type { Execution } from "../sdk/models.ts";

/**
 * What stands for the plan of a WebDriver session (API.md §12): a session is an execution with no test plan
 * (`kind: "session"`, `test_plan_id: null`), so the CLI's tables and reports name it by what it is.
 */
export const sessionLabel = "Appium session";

/** The plan an execution ran, by name and ID when its name is known, by ID otherwise; a session by its own name. */
export function planLabel(
  execution: Pick<Execution, "test_plan_id" | "name">,
  names: Map<string, string>,
): string {
  if (execution.test_plan_id === null) return execution.name ?? sessionLabel;
  const name = names.get(execution.test_plan_id);
  return name ? `${name} (${execution.test_plan_id})` : execution.test_plan_id;
}

/**
 * The app and version an execution ran ("com.example 1.2.3"), or null for a session that names no registered
 * app (its package_name and version are null together: API.md §12).
 */
export function appVersionLabel(execution: Pick<Execution, "package_name" | "version">): string | null {
  return execution.package_name === null
    ? null
    : `${execution.package_name} ${execution.version ?? ""}`.trimEnd();
}
