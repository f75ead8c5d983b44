import { ApiProblem } from "../../api/problem.ts";
import { humanMessage } from "../../format/validation-message.ts";

/** The schedule form's fields, as the API's `errors[].path` names them (`/cron`, `/timezone`, `/version`). */
export type ScheduleField = "cron" | "timezone" | "version";

export interface ScheduleFieldErrors {
  fields: Partial<Record<ScheduleField, string[]>>;
  general: string[];
}

const fields: ReadonlySet<string> = new Set(["cron", "timezone", "version"]);

/**
 * The API's refusal of a schedule, sorted to the form's fields (as the plan form does, field-errors.ts), each
 * message in words people use (format/validation-message.ts). Anything no field holds is general.
 */
export function scheduleFieldErrors(error: unknown): ScheduleFieldErrors {
  const result: ScheduleFieldErrors = { fields: {}, general: [] };
  const errors = error instanceof ApiProblem ? error.problem.errors : undefined;
  if (!Array.isArray(errors) || errors.length === 0) {
    if (error) result.general.push(error instanceof Error ? error.message : "Saving the schedule failed.");
    return result;
  }
  for (const item of errors as Array<{ path?: unknown; message?: unknown }>) {
    const path = typeof item.path === "string" ? item.path : "/";
    const message = humanMessage(typeof item.message === "string" ? item.message : "is invalid");
    const field = path.slice(1);
    if (fields.has(field)) {
      const key = field as ScheduleField;
      result.fields[key] = [...(result.fields[key] ?? []), message];
    } else {
      result.general.push(`${path === "/" ? "The schedule" : path} ${message}`);
    }
  }
  return result;
}
