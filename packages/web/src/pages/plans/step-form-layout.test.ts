import { describe, expect, it } from "vitest";
import { stepSchemasFromOpenApi } from "../../../../../scripts/web-step-schemas/step-schemas-from-openapi.ts";
// The committed document, as text (Vite's ?raw): the server's openapi-drift.test.ts keeps it current.
import openApiText from "../../../../server/openapi.json?raw";
import { stepTypes } from "./step-fields.ts";
import { stepLayouts } from "./step-form-layout.ts";
import { stepSchemas } from "./step-schemas.generated.ts";

type Schemas = Record<string, { properties: Record<string, unknown> }>;

/** Each step field of `schemas` the form neither shows nor leaves out on purpose, as "type: path". */
function fieldsNotPlaced(schemas: Schemas): string[] {
  const layouts = stepLayouts as Record<string, { fields: Array<{ path: string }>; leftOut: string[] }>;
  const missing: string[] = [];
  for (const [type, schema] of Object.entries(schemas)) {
    const layout = layouts[type];
    const placed = new Set([
      ...(layout?.fields.map((field) => field.path) ?? []),
      ...(layout?.leftOut ?? []),
    ]);
    for (const path of Object.keys(schema.properties))
      if (!placed.has(path)) missing.push(`${type}: ${path}`);
  }
  return missing;
}

describe("the plan form's fields and the server's step schemas", () => {
  it("are made from the committed OpenAPI document (else run `npm run openapi`)", () => {
    expect(stepSchemas).toEqual(stepSchemasFromOpenApi(JSON.parse(openApiText)));
  });

  it("place every field of every step type: shown by the form, or left out on purpose", () => {
    expect(fieldsNotPlaced(stepSchemas)).toEqual([]);
    expect(Object.keys(stepLayouts).sort()).toEqual(Object.keys(stepSchemas).sort());
  });

  it("catch a field the server adds to a step that the form does not place", () => {
    const document = JSON.parse(openApiText);
    document.components.schemas.MaestroStep.properties.env = {
      type: "object",
      additionalProperties: { type: "string" },
    };
    expect(fieldsNotPlaced(stepSchemasFromOpenApi(document))).toEqual(["maestro: env"]);
  });

  it("show only what the schemas have, each field once, and leave out only what they do not show", () => {
    for (const [type, layout] of Object.entries(stepLayouts)) {
      const properties = Object.keys(stepSchemas[type as keyof typeof stepSchemas].properties);
      const shown = layout.fields.map((field) => field.path);
      expect(new Set(shown).size, type).toBe(shown.length);
      for (const path of [...shown, ...layout.leftOut]) expect(properties, type).toContain(path);
      for (const path of layout.leftOut) expect(shown, type).not.toContain(path);
    }
  });

  it("take choices and bounds from the schemas: the options of a choice, the range a help text says", () => {
    const instrumentation = stepTypes.instrumentation.fields;
    expect(instrumentation.find((field) => field.path.join(".") === "filter.size")?.options).toEqual(
      stepSchemas.instrumentation.properties["filter.size"].enum,
    );
    const { minimum, maximum } = stepSchemas.maestro.properties.shards;
    expect(stepTypes.maestro.fields.find((field) => field.path[0] === "shards")?.help).toMatch(
      new RegExp(`^${minimum}–${maximum}:`),
    );
  });
});
