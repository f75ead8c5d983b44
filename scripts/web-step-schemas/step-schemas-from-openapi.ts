/**
 * The step schemas of the OpenAPI document as the dashboard's plan form reads them: per step type, each field the
 * API takes, by its dotted path (the members of `expect` and `filter` one by one), with its type, choices and
 * bounds. `npm run openapi` writes them to packages/web/src/pages/plans/step-schemas.generated.ts, so the form's
 * fields come from the schemas POST /v1/testplans checks (packages/server/src/features/testplans/) rather than a
 * copy of them; packages/web/src/pages/plans/step-form-layout.ts adds what the document cannot say (labels,
 * order, groups, help).
 *
 * Pure (no Node, no DOM): the dashboard's unit test runs it on the committed document to see the module is current.
 */

type SchemaObject = Record<string, unknown>;

interface OpenApiDocument {
  components: { schemas: Record<string, SchemaObject> };
}

/** What the form can make an input for; "other" is a shape it cannot, which the form must leave out. */
export type StepPropertyType =
  | "string"
  | "integer"
  | "number"
  | "boolean"
  /** An array of strings. */
  | "string list"
  /** An object of string values under any names (instrumentation's args). */
  | "string map"
  | "other";

export interface StepProperty {
  type: StepPropertyType;
  /** The step is refused without it (a member of an object: that object, if given, is). */
  required?: true;
  enum?: string[];
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
}

export interface StepSchema {
  /** The property `type` says this step type is. */
  type: string;
  properties: Record<string, StepProperty>;
}

const componentRef = "#/components/schemas/";

/**
 * A number or a word that stands for one (a step's `shards`: 1–50 or "auto", API.md §13): the number's branch,
 * which the form makes its input for; undefined for any other union.
 */
function numberOrWord(schema: SchemaObject): SchemaObject | undefined {
  const branches = schema.anyOf as SchemaObject[] | undefined;
  if (!Array.isArray(branches)) return undefined;
  const numbers = branches.filter((b) => b.type === "integer" || b.type === "number");
  const words = branches.filter((b) => b.type === "string" && Array.isArray(b.enum));
  return numbers.length === 1 && numbers.length + words.length === branches.length ? numbers[0] : undefined;
}

function propertyOf(schema: SchemaObject, required: boolean): StepProperty {
  const numeric = numberOrWord(schema);
  if (numeric) return propertyOf(numeric, required);
  const bounds: Partial<StepProperty> = {};
  for (const key of ["minimum", "exclusiveMinimum", "maximum"] as const) {
    if (typeof schema[key] === "number") bounds[key] = schema[key] as number;
  }
  const flag = required ? { required: true as const } : {};
  const items = schema.items as SchemaObject | undefined;
  const values = schema.additionalProperties as SchemaObject | boolean | undefined;
  let type: StepPropertyType = "other";
  if (Array.isArray(schema.enum)) {
    if (schema.type === "string") return { type: "string", ...flag, enum: schema.enum as string[] };
  } else if (schema.type === "string" || schema.type === "integer" || schema.type === "number") {
    type = schema.type;
  } else if (schema.type === "boolean") {
    type = "boolean";
  } else if (schema.type === "array" && items?.type === "string" && !items.enum) {
    type = "string list";
  } else if (
    schema.type === "object" &&
    !schema.properties &&
    typeof values === "object" &&
    values.type === "string"
  ) {
    type = "string map";
  }
  return { type, ...flag, ...bounds };
}

/** A step's properties by dotted path: an object with named properties is opened, one path per member. */
function flatten(schema: SchemaObject, prefix: string, into: Record<string, StepProperty>): void {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, SchemaObject>)) {
    const path = `${prefix}${name}`;
    if (property.$ref) throw new Error(`${path}: a $ref in a step's property is not read yet`);
    if (property.type === "object" && property.properties) flatten(property, `${path}.`, into);
    else into[path] = propertyOf(property, required.has(name));
  }
}

/** Each step type of the document's Step (its oneOf, in order), with its fields less `type`. */
export function stepSchemasFromOpenApi(document: OpenApiDocument): Record<string, StepSchema> {
  const schemas = document.components.schemas;
  const step = schemas.Step;
  if (!step || !Array.isArray(step.oneOf)) throw new Error("the OpenAPI document has no Step oneOf");
  const out: Record<string, StepSchema> = {};
  for (const branch of step.oneOf as SchemaObject[]) {
    const ref = branch.$ref as string;
    const schema = schemas[ref.slice(componentRef.length)];
    if (!schema) throw new Error(`the OpenAPI document has no ${ref}`);
    const typeEnum = ((schema.properties as SchemaObject).type as SchemaObject).enum as string[];
    const type = typeEnum[0] as string;
    const properties: Record<string, StepProperty> = {};
    flatten(schema, "", properties);
    delete properties.type;
    out[type] = { type, properties };
  }
  return out;
}

/** The module's text (formatted by Biome after it is written). */
export function stepSchemasModule(schemas: Record<string, StepSchema>): string {
  return [
    "// Generated by `npm run openapi` from packages/server/openapi.json's Step schemas",
    "// (scripts/web-step-schemas/step-schemas-from-openapi.ts): do not edit.",
    "",
    `export const stepSchemas = ${JSON.stringify(schemas, null, 2)} as const;`,
    "",
  ].join("\n");
}
