// The plan's steps as the form edits them: each step type's fields (the server's step schemas, as `npm run openapi`
// writes them to step-schemas.generated.ts, laid out by step-form-layout.ts) as inputs that hold text, and the
// conversion between a step of the API and those inputs. A step the form cannot show exactly (a field it does not
// know, a value of a shape it does not edit) stays JSON, so nothing is dropped.

import { type FieldLayout, stepLayouts } from "./step-form-layout.ts";
import { stepSchemas } from "./step-schemas.generated.ts";

/** A step as the API sends and takes it. */
export type StepJson = Record<string, unknown>;

export type FieldKind =
  /** One line of text. */
  | "text"
  /** Several lines of text (a shell command). */
  | "multiline"
  | "integer"
  | "number"
  /** A list of strings, one a line. */
  | "lines"
  /** A map of string to string, one `name=value` a line. */
  | "pairs"
  /** true, false or left out (the default). */
  | "boolean"
  /** One of `options`, or left out (the default). */
  | "choice"
  /** A list of texts, each its own textarea (Maestro flows). */
  | "texts";

export interface StepField {
  /** Where the value sits in the step: ["expect", "min_sdk_at_most"]. */
  path: readonly string[];
  label: string;
  kind: FieldKind;
  help?: string;
  /** What the API does when the field is left out, for booleans and choices ("yes", "on_failure"). */
  default?: string;
  options?: readonly string[];
  /** The group of fields it is shown in ("Expect", "Filter", "Device options"). */
  group?: string;
}

/** A field as step-schemas.generated.ts has it: what its input is made from. */
interface SchemaProperty {
  type: string;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
}

/** The input a field of the schema is edited with, as its layout asks. */
function kindOf(property: SchemaProperty, layout: FieldLayout): FieldKind {
  if (property.type === "string" && property.enum) return "choice";
  if (property.type === "string") return layout.input === "multiline" ? "multiline" : "text";
  if (property.type === "string list") return layout.input === "texts" ? "texts" : "lines";
  if (property.type === "string map") return "pairs";
  if (property.type === "integer" || property.type === "number" || property.type === "boolean") {
    return property.type;
  }
  // step-form-layout.test.ts fails first: such a field belongs in the layout's leftOut.
  throw new Error(`the form has no input for ${layout.path}, a field of type ${property.type}`);
}

/** A field of the form: its schema's type, choices and bounds with its layout's words and place. */
function fieldOf(type: StepType, layout: FieldLayout): StepField {
  const property = (stepSchemas[type].properties as Record<string, SchemaProperty>)[layout.path];
  if (!property) throw new Error(`the ${type} step has no field ${layout.path}`);
  const { minimum, maximum } = property;
  const help = typeof layout.help === "function" ? layout.help({ minimum, maximum }) : layout.help;
  return {
    path: layout.path.split("."),
    label: layout.label,
    kind: kindOf(property, layout),
    ...(help !== undefined && { help }),
    ...(layout.default !== undefined && { default: layout.default }),
    ...(property.enum && { options: property.enum }),
    ...(layout.group !== undefined && { group: layout.group }),
  };
}

export type StepType = keyof typeof stepLayouts;
/** The step types in the order the form lists them (the layout's). */
export const stepTypeNames = Object.keys(stepLayouts) as StepType[];

/** Each step type the API takes, with its fields in the order the form shows them. */
export const stepTypes = Object.fromEntries(
  stepTypeNames.map((type) => [
    type,
    {
      summary: stepLayouts[type].summary,
      fields: (stepLayouts[type].fields as FieldLayout[]).map((layout) => fieldOf(type, layout)),
    },
  ]),
) as Record<StepType, { summary: string; fields: StepField[] }>;

const isStepType = (type: unknown): type is StepType => typeof type === "string" && type in stepTypes;
export const fieldsOf = (type: StepType): readonly StepField[] => stepTypes[type].fields;
export const fieldKey = (field: StepField) => field.path.join(".");

/** A step in the form: its type's inputs (texts, lists of texts for flows), or its JSON with why. */
export type StepDraft =
  | { key: string; type: StepType; values: Record<string, string | string[]> }
  | { key: string; type: string; json: string; reason: string };

export const isFormDraft = (draft: StepDraft): draft is Extract<StepDraft, { values: unknown }> =>
  "values" in draft;

let keys = 0;
/** A key that stays with a step while it moves (React's list key, and where focus goes back after a move). */
export const newStepKey = () => `step-${++keys}`;

/** A new, empty step of a type; Maestro starts with one empty flow to fill in. */
export function emptyStep(type: StepType): StepDraft {
  const values: Record<string, string | string[]> = {};
  for (const field of fieldsOf(type)) values[fieldKey(field)] = field.kind === "texts" ? [""] : "";
  return { key: newStepKey(), type, values };
}

const booleanText = (value: boolean) => (value ? "yes" : "no");

/** A value of the API as the input's text; undefined when the input cannot hold it as it is. */
function toText(field: StepField, value: unknown): string | string[] | undefined {
  if (value === undefined) return field.kind === "texts" ? [""] : "";
  switch (field.kind) {
    case "text":
    case "multiline":
      return typeof value === "string" ? value : undefined;
    case "integer":
    case "number":
      return typeof value === "number" ? String(value) : undefined;
    case "boolean":
      return typeof value === "boolean" ? booleanText(value) : undefined;
    case "choice":
      return typeof value === "string" && field.options?.includes(value) ? value : undefined;
    case "lines":
      return Array.isArray(value) && value.every((item) => typeof item === "string")
        ? value.join("\n")
        : undefined;
    case "texts":
      return Array.isArray(value) && value.every((item) => typeof item === "string") ? [...value] : undefined;
    case "pairs": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
      const entries = Object.entries(value);
      if (!entries.every(([, text]) => typeof text === "string")) return undefined;
      return entries.map(([key, text]) => `${key}=${text}`).join("\n");
    }
  }
}

/**
 * The input's text as the API's value; undefined leaves the field out. A number that does not read as one is
 * sent as typed, so the API's message about it shows at its field.
 */
function fromText(field: StepField, text: string | string[]): unknown {
  if (Array.isArray(text)) {
    const items = text.filter((item) => item.trim() !== "");
    return items.length > 0 ? items : undefined;
  }
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  switch (field.kind) {
    case "text":
      return trimmed;
    case "multiline":
      return text;
    case "integer":
    case "number":
      return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
    case "boolean":
      return trimmed === "yes";
    case "choice":
      return trimmed;
    case "lines": {
      const lines = text
        .split("\n")
        .map((line) => line.trim())
        .filter(Boolean);
      return lines.length > 0 ? lines : undefined;
    }
    case "pairs": {
      const pairs: Record<string, string> = {};
      for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        const at = line.indexOf("=");
        if (at < 0) pairs[line.trim()] = "";
        else pairs[line.slice(0, at).trim()] = line.slice(at + 1);
      }
      return pairs;
    }
    case "texts":
      return undefined;
  }
}

/** A copy with keys sorted at every level, to compare two steps regardless of their members' order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}
const sameStep = (a: unknown, b: unknown) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/** The members of a step (and of its objects the form opens, like expect and filter) the form has no input for. */
function unknownMembers(type: StepType, step: StepJson): string[] {
  const known = fieldsOf(type).map((field) => field.path);
  const unknown: string[] = [];
  const walk = (value: unknown, at: string[]) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return;
    for (const key of Object.keys(value)) {
      const path = [...at, key];
      if (at.length === 0 && key === "type") continue;
      const exact = known.some((field) => field.join(".") === path.join("."));
      const parent = known.some(
        (field) => field.length > path.length && field.join(".").startsWith(`${path.join(".")}.`),
      );
      if (exact) continue;
      if (parent) walk((value as Record<string, unknown>)[key], path);
      else unknown.push(path.join("."));
    }
  };
  walk(step, []);
  return unknown;
}

/** A step as JSON in the form, with the reason the form does not show its fields. */
const jsonDraft = (step: unknown, type: string, reason: string): StepDraft => ({
  key: newStepKey(),
  type,
  json: JSON.stringify(step, null, 2),
  reason,
});

/**
 * A step of the API as the form shows it. Kept as JSON (and said why) when the form would lose or change any of
 * it: an unknown type, a field the form has no input for, or a value of a shape its input cannot hold.
 */
export function toDraft(step: unknown): StepDraft {
  if (typeof step !== "object" || step === null || Array.isArray(step)) {
    return jsonDraft(step, "?", "This step is not a JSON object: edit it as JSON.");
  }
  const json = step as StepJson;
  const type = json.type;
  if (!isStepType(type)) {
    return jsonDraft(
      step,
      typeof type === "string" ? type : "?",
      `The form has no fields for steps of type ${JSON.stringify(type ?? null)}: edit it as JSON.`,
    );
  }
  const unknown = unknownMembers(type, json);
  if (unknown.length > 0) {
    return jsonDraft(
      step,
      type,
      `This step has fields the form does not edit (${unknown.join(", ")}): edit it as JSON.`,
    );
  }
  const values: Record<string, string | string[]> = {};
  for (const field of fieldsOf(type)) {
    let value: unknown = json;
    for (const key of field.path) value = (value as Record<string, unknown> | undefined)?.[key];
    const text = toText(field, value);
    if (text === undefined) {
      return jsonDraft(
        step,
        type,
        `The form cannot show this step's ${fieldKey(field)} as it is: edit it as JSON.`,
      );
    }
    values[fieldKey(field)] = text;
  }
  const draft: StepDraft = { key: newStepKey(), type, values };
  // The last guard: whatever the form would send back must be the step itself.
  if (!sameStep(fromDraft(draft), json)) {
    return jsonDraft(step, type, "The form cannot show this step exactly as it is: edit it as JSON.");
  }
  return draft;
}

/** What a step's JSON textarea holds, or why it cannot be sent. */
export function parseStepJson(text: string): { step?: StepJson; error?: string } {
  try {
    const step: unknown = JSON.parse(text);
    if (typeof step !== "object" || step === null || Array.isArray(step)) {
      return { error: 'must be a JSON object: {"type": …, …}' };
    }
    return { step: step as StepJson };
  } catch (error) {
    return { error: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * The step the form sends: empty inputs left out. An inspect step always sends `expect`, the one thing it is
 * about, so the API can say it needs at least one check. A JSON step is sent as parsed (undefined: not JSON).
 */
export function fromDraft(draft: StepDraft): StepJson | undefined {
  if (!isFormDraft(draft)) return parseStepJson(draft.json).step;
  const step: StepJson = { type: draft.type };
  if (draft.type === "inspect") step.expect = {};
  for (const field of fieldsOf(draft.type)) {
    const value = fromText(field, draft.values[fieldKey(field)] ?? "");
    if (value === undefined) continue;
    let into = step;
    for (const key of field.path.slice(0, -1)) {
      into[key] ??= {};
      into = into[key] as StepJson;
    }
    into[field.path[field.path.length - 1] as string] = value;
  }
  return step;
}

/**
 * Where the API's message about a step shows, given the path inside that step (`["expect", "min_sdk_at_most"]`):
 * the input holding it (`expect.min_sdk_at_most`; a flow by its index, `flows.1`), or the step as a whole
 * (`""`) with the rest of the path as a prefix. A JSON step takes every message about it at its textarea.
 */
export function stepFieldOf(
  draft: StepDraft | undefined,
  inside: readonly string[],
): { field: string; prefix?: string } {
  const rest = (from: number) => (inside.length > from ? inside.slice(from).join(" › ") : undefined);
  if (!draft || !isFormDraft(draft)) return { field: "", prefix: rest(0) };
  let best: StepField | undefined;
  for (const field of fieldsOf(draft.type)) {
    const matches = field.path.every((key, at) => inside[at] === key);
    if (matches && field.path.length > (best?.path.length ?? 0)) best = field;
  }
  if (!best) return { field: "", prefix: rest(0) };
  const depth = best.path.length;
  const index = inside[depth];
  if (best.kind === "texts" && index !== undefined && /^\d+$/.test(index)) {
    return { field: `${fieldKey(best)}.${index}`, prefix: rest(depth + 1) };
  }
  if (best.kind === "lines" && index !== undefined && /^\d+$/.test(index)) {
    return { field: fieldKey(best), prefix: `entry ${Number(index) + 1}` };
  }
  return { field: fieldKey(best), prefix: rest(depth) };
}
