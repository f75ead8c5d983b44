/** The parts of an OpenAPI 3.1 document the fuzzer needs: each operation's parameters and request bodies. */

export type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The templated path, e.g. `/v1/apps/{package_name}`. */
  path: string;
  parameters: Parameter[];
  /** Request body schemas by media type (`application/json`, `application/octet-stream`, …). */
  bodies: Record<string, JsonSchema>;
}

const methods = new Set(["get", "put", "post", "delete", "patch", "head", "options"]);

/** Follows `$ref`s into `#/components/schemas/…` (the only kind the document uses). */
export function resolveSchema(document: OpenApiDocument, schema: unknown): JsonSchema {
  let current = (schema ?? {}) as JsonSchema;
  for (let depth = 0; typeof current.$ref === "string" && depth < 20; depth++) {
    const name = current.$ref.replace(/^#\/components\/schemas\//, "");
    current = document.components?.schemas?.[decodeURIComponent(name)] ?? {};
  }
  return current;
}

function asParameter(document: OpenApiDocument, raw: unknown): Parameter | undefined {
  const parameter = resolveSchema(document, raw);
  if (typeof parameter.name !== "string" || typeof parameter.in !== "string") return undefined;
  return {
    name: parameter.name,
    in: parameter.in as Parameter["in"],
    required: parameter.required === true,
    schema: resolveSchema(document, parameter.schema),
  };
}

/** Every operation of the document, in document order. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const [method, rawOperation] of Object.entries(item)) {
      if (!methods.has(method)) continue;
      const operation = rawOperation as Record<string, unknown>;
      const parameters = [...shared, ...((operation.parameters as unknown[]) ?? [])]
        .map((raw) => asParameter(document, raw))
        .filter((parameter): parameter is Parameter => parameter !== undefined);
      const bodies: Record<string, JsonSchema> = {};
      const requestBody = operation.requestBody as
        | { content?: Record<string, { schema?: unknown }> }
        | undefined;
      for (const [mediaType, content] of Object.entries(requestBody?.content ?? {})) {
        bodies[mediaType] = resolveSchema(document, content.schema);
      }
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters,
        bodies,
      });
    }
  }
  return operations;
}
