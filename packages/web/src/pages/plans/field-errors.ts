import { ApiProblem } from "../../api/problem.ts";
import { humanMessage } from "../../format/validation-message.ts";
import { type StepDraft, stepFieldOf } from "./step-fields.ts";

/**
 * A form field the plan form shows messages at: `devices.0.platform` is the first device row's platform,
 * `steps.1.expect.min_sdk_at_most` the second step's input of that name, `steps.1` the second step as a whole.
 */
export type FieldKey = string;

export interface FieldErrors {
  /** Messages by field, reworded for people (format/validation-message.ts). */
  fields: Record<FieldKey, string[]>;
  /** Messages no field of the form holds (an unknown member, the body as a whole). */
  general: string[];
}

const simple = new Set(["name", "package_name", "timeout_seconds", "max_attempts"]);
const deviceFields = new Set(["platform", "model", "os_version"]);

/** An empty name, said the same whether the form (before sending) or the server finds it. */
export const emptyNameMessage = "Give the plan a name";

/** The plan form's own words for some of the server's messages at its fields (the rest: humanMessage's). */
const planFieldWords: Readonly<Record<FieldKey, Readonly<Record<string, string>>>> = {
  name: { "must NOT have fewer than 1 characters": emptyNameMessage },
};

const unescapePointer = (segment: string) => segment.replaceAll("~1", "/").replaceAll("~0", "~");

/**
 * Where a JSON Pointer of the API's `errors: [{path, message}]` shows in the plan form: `/timeout_seconds` at the
 * timeout field, `/devices/1/model` at the second device row's model, `/steps/1/expect/min_sdk_at_most` at that
 * input of the second step when the steps are edited as a form (`steps`, the steps as they are in the form), and
 * anything under `/steps` at the steps' JSON when they are edited as JSON (the message then says which step and
 * member). Undefined: no field holds it.
 */
export function fieldOf(
  pointer: string,
  steps?: readonly StepDraft[],
): { field: FieldKey; prefix?: string } | undefined {
  const [first, ...rest] = pointer.split("/").slice(1).map(unescapePointer);
  if (first === undefined) return undefined;
  if (simple.has(first) && rest.length === 0) return { field: first };
  if (first === "devices") {
    const [index, member] = rest;
    if (index !== undefined && /^\d+$/.test(index) && member !== undefined && deviceFields.has(member)) {
      return { field: `devices.${index}.${member}` };
    }
    return { field: "devices", prefix: rest.length > 0 ? `device ${Number(rest[0]) + 1}` : undefined };
  }
  if (first === "steps") {
    if (rest.length === 0) return { field: "steps" };
    const [index, ...inside] = rest;
    if (steps && index !== undefined && /^\d+$/.test(index) && Number(index) < steps.length) {
      const place = stepFieldOf(steps[Number(index)], inside);
      return {
        field: place.field ? `steps.${index}.${place.field}` : `steps.${index}`,
        prefix: place.prefix,
      };
    }
    const where = /^\d+$/.test(index ?? "") ? `step ${Number(index) + 1}` : index;
    return { field: "steps", prefix: [where, ...inside].join(" › ") };
  }
  return undefined;
}

/**
 * The API's refusal of a plan, sorted to the form's fields, each message in words people use (humanMessage). Not a
 * validation problem: all of it is general.
 */
export function fieldErrors(error: unknown, steps?: readonly StepDraft[]): FieldErrors {
  const result: FieldErrors = { fields: {}, general: [] };
  const errors = error instanceof ApiProblem ? error.problem.errors : undefined;
  if (!Array.isArray(errors) || errors.length === 0) {
    if (error) result.general.push(error instanceof Error ? error.message : "Saving the plan failed.");
    return result;
  }
  for (const item of errors as Array<{ path?: unknown; message?: unknown }>) {
    const path = typeof item.path === "string" ? item.path : "/";
    const said = typeof item.message === "string" ? item.message : "is invalid";
    const place = fieldOf(path, steps);
    const message = humanMessage(said, place && !place.prefix ? planFieldWords[place.field] : undefined);
    if (!place) {
      result.general.push(`${path === "/" ? "The plan" : path} ${message}`);
      continue;
    }
    const text = place.prefix ? `${place.prefix}: ${message}` : message;
    result.fields[place.field] = [...(result.fields[place.field] ?? []), text];
  }
  return result;
}
