import type { ErrorObject } from "ajv";
import { pointerSegments } from "./locate.ts";

/** A schema mistake as a person reads it: where (a JSON Pointer into the file), and what is wrong there. */
export interface SchemaIssue {
  pointer: string;
  /** The place is the last segment's key, not its value (an unknown key). */
  atKey?: boolean;
  message: string;
}

type SchemaObject = Record<string, unknown>;

const typeNames: Record<string, string> = {
  string: "a string",
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
  array: "a list",
  object: "a map (key: value)",
  null: "empty",
};

function typeOf(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const oneOf = (values: unknown[]) =>
  values.length === 1 ? `must be ${String(values[0])}` : `must be one of ${values.map(String).join(", ")}`;

/** The schema a `$ref` names, in the same document. */
function resolve(root: SchemaObject, schema: unknown): SchemaObject | undefined {
  const ref = (schema as SchemaObject | undefined)?.$ref;
  if (typeof ref !== "string") return schema as SchemaObject | undefined;
  let node: unknown = root;
  for (const segment of pointerSegments(ref.replace(/^#/, ""))) node = (node as SchemaObject)?.[segment];
  return node as SchemaObject | undefined;
}

/** The tag values of a discriminated oneOf: the step types. */
function tagValues(root: SchemaObject, parent: SchemaObject, tag: string): unknown[] {
  const branches = (parent.oneOf as unknown[] | undefined) ?? [];
  return branches.flatMap((branch) => {
    const property = (resolve(root, branch)?.properties as SchemaObject | undefined)?.[tag] as
      | SchemaObject
      | undefined;
    return property?.const !== undefined ? [property.const] : ((property?.enum as unknown[]) ?? []);
  });
}

/** The allowed values when every branch of an anyOf is a constant (how some generators spell an enum). */
function constBranches(schema: SchemaObject): unknown[] | undefined {
  const branches = schema.anyOf as SchemaObject[] | undefined;
  if (!branches?.length || !branches.every((b) => b && "const" in b)) return undefined;
  return branches.map((b) => b.const);
}

/** One Ajv error (validated with `verbose: true`) as a message without validator jargon, or none to drop it. */
function describe(error: ErrorObject, root: SchemaObject): SchemaIssue | undefined {
  const at = error.instancePath;
  const params = error.params as Record<string, unknown>;
  const parent = (error.parentSchema ?? {}) as SchemaObject;
  const limit = params.limit as number;
  switch (error.keyword) {
    case "additionalProperties": {
      const known = Object.keys((parent.properties as SchemaObject | undefined) ?? {});
      return {
        pointer: `${at}/${String(params.additionalProperty)}`,
        atKey: true,
        message: `is not a known key${known.length ? `; the keys here are ${known.join(", ")}` : ""}`,
      };
    }
    case "required":
      return { pointer: at, message: `must have "${String(params.missingProperty)}"` };
    case "discriminator": {
      const tag = String(params.tag);
      const values = tagValues(root, parent, tag);
      if (params.error === "tag")
        return { pointer: at, message: `must have "${tag}" (${values.join(", ")})` };
      return { pointer: `${at}/${tag}`, message: oneOf(values) };
    }
    case "enum":
      return { pointer: at, message: oneOf(params.allowedValues as unknown[]) };
    case "const":
      return { pointer: at, message: oneOf([params.allowedValue]) };
    case "anyOf": {
      const values = constBranches(parent);
      return { pointer: at, message: values ? oneOf(values) : "does not have any of the allowed forms" };
    }
    case "oneOf":
      return { pointer: at, message: "does not have any of the allowed forms" };
    case "type": {
      const wanted = String(params.type)
        .split(",")
        .map((t) => typeNames[t] ?? t);
      const found = typeNames[typeOf(error.data)] ?? typeOf(error.data);
      return { pointer: at, message: `must be ${wanted.join(" or ")}, not ${found}` };
    }
    case "minItems":
      return { pointer: at, message: `must have at least ${count(limit, "entry", "entries")}` };
    case "maxItems":
      return { pointer: at, message: `must have at most ${count(limit, "entry", "entries")}` };
    case "minLength":
      return {
        pointer: at,
        message: limit === 1 ? "must not be empty" : `must be ${limit} characters or more`,
      };
    case "maxLength":
      return { pointer: at, message: `must be ${count(limit, "character")} or fewer` };
    case "minProperties":
      return { pointer: at, message: limit === 1 ? "must not be empty" : `must have ${limit} keys or more` };
    case "maxProperties":
      return { pointer: at, message: `must have ${count(limit, "key")} or fewer` };
    case "minimum":
      return { pointer: at, message: `must be ${limit} or more` };
    case "maximum":
      return { pointer: at, message: `must be ${limit} or less` };
    case "exclusiveMinimum":
      return { pointer: at, message: `must be more than ${limit}` };
    case "exclusiveMaximum":
      return { pointer: at, message: `must be less than ${limit}` };
    case "pattern": {
      const examples = parent.examples as unknown[] | undefined;
      return {
        pointer: at,
        message: `must match ${String(params.pattern)}${examples?.length ? ` (like ${String(examples[0])})` : ""}`,
      };
    }
    default:
      return { pointer: at, message: error.message ?? `is not valid (${error.keyword})` };
  }
}

/**
 * Ajv's errors as issues a person can act on. An anyOf/oneOf error only says "none of the branches fit": it
 * is dropped when its branches' own errors say why, and an anyOf of constants becomes one "must be one of".
 */
export function schemaIssues(errors: ErrorObject[], root: SchemaObject): SchemaIssue[] {
  const enumLike = new Set(
    errors
      .filter((e) => e.keyword === "anyOf" && constBranches((e.parentSchema ?? {}) as SchemaObject))
      .map((e) => e.instancePath),
  );
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (error.keyword === "const" && enumLike.has(error.instancePath)) continue;
    if (
      (error.keyword === "anyOf" || error.keyword === "oneOf") &&
      !enumLike.has(error.instancePath) &&
      errors.some(
        (e) => e !== error && e.instancePath.startsWith(error.instancePath) && e.keyword !== error.keyword,
      )
    ) {
      continue;
    }
    const issue = describe(error, root);
    if (!issue) continue;
    const key = `${issue.pointer} ${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}
