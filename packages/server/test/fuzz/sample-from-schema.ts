import { type JsonSchema, type OpenApiDocument, resolveSchema } from "./openapi-operations.ts";
import type { SeededRandom } from "./seeded-random.ts";

/**
 * Values a valid request would carry, by field name: patterns cannot be sampled in general, and a request
 * that names things that exist reaches deeper into the server than one refused at validation.
 */
export type KnownValues = Record<string, unknown>;

/** A plausible, mostly valid value for `schema`: what a well-behaved client would send. */
export function sampleFromSchema(
  document: OpenApiDocument,
  rawSchema: unknown,
  random: SeededRandom,
  known: KnownValues,
  name = "",
  depth = 0,
): unknown {
  const schema = resolveSchema(document, rawSchema);
  if (name in known) return known[name];
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return random.pick(schema.enum);
  if ("default" in schema && random.chance(0.3)) return schema.default;
  const variants = (schema.oneOf ?? schema.anyOf) as unknown[] | undefined;
  if (Array.isArray(variants) && variants.length > 0) {
    return sampleFromSchema(document, random.pick(variants), random, known, name, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return sampleFromSchema(document, schema.allOf[0], random, known, name, depth + 1);
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null") ?? "null";
  if (type === undefined && schema.properties) type = "object";
  switch (type) {
    case "string":
      return sampleString(schema, random);
    case "integer":
    case "number": {
      const minimum = typeof schema.minimum === "number" ? schema.minimum : 0;
      const maximum = typeof schema.maximum === "number" ? schema.maximum : minimum + 100;
      return minimum + random.below(Math.min(maximum - minimum, 1000) + 1);
    }
    case "boolean":
      return random.chance(0.5);
    case "null":
      return null;
    case "array": {
      if (depth > 6) return [];
      const count = Math.max(typeof schema.minItems === "number" ? schema.minItems : 0, random.below(3));
      const items = [];
      for (let i = 0; i < count; i++) {
        items.push(sampleFromSchema(document, schema.items, random, known, singular(name), depth + 1));
      }
      return items;
    }
    case "object": {
      if (depth > 6) return {};
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const value: Record<string, unknown> = {};
      for (const [property, propertySchema] of Object.entries(properties)) {
        if (required.has(property) || random.chance(0.5)) {
          value[property] = sampleFromSchema(document, propertySchema, random, known, property, depth + 1);
        }
      }
      return value;
    }
    default:
      return "x";
  }
}

function sampleString(schema: JsonSchema, random: SeededRandom): string {
  switch (schema.format) {
    case "date-time":
      return new Date(Date.UTC(2026, 10, 1 + random.below(28))).toISOString();
    case "uri":
      return "https://ci.example.com/build/1";
    case "email":
      return "dev@example.com";
  }
  const minLength = typeof schema.minLength === "number" ? schema.minLength : 1;
  return "fuzz".padEnd(Math.max(minLength, 4), "z");
}

/** `test_plan_ids` → `test_plan_id`: array items are looked up by the singular name. */
function singular(name: string): string {
  return name.endsWith("s") ? name.slice(0, -1) : name;
}
