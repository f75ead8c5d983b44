/**
 * The JSON Schema of testbay.yaml, made from the server's OpenAPI document by `npm run openapi`, so the file
 * accepts exactly the plans POST /v1/testplans accepts.
 *
 * It is draft-07, not the 2020-12 dialect OpenAPI 3.1 writes in: the editors that read the file's
 * `# yaml-language-server: $schema=…` comment validate draft-07 and only partly understand 2020-12, and the
 * plan schemas use no keyword that draft-07 lacks (the generator checks that, so a new one cannot slip in).
 */

type SchemaObject = Record<string, unknown>;

interface OpenApiDocument {
  components: { schemas: Record<string, SchemaObject> };
}

const componentRef = "#/components/schemas/";
const definitionRef = "#/definitions/";

/** Keywords of 2019-09 and 2020-12 that a draft-07 validator would silently ignore. */
const newerKeywords = [
  "$defs",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$recursiveRef",
  "prefixItems",
  "unevaluatedProperties",
  "unevaluatedItems",
  "dependentRequired",
  "dependentSchemas",
  "minContains",
  "maxContains",
];

/** A copy of a component with its references pointed at `definitions`, and the components it references. */
function rewrite(node: unknown, where: string, referenced: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((item, i) => rewrite(item, `${where}/${i}`, referenced));
  if (node === null || typeof node !== "object") return node;
  const out: SchemaObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (newerKeywords.includes(key)) {
      throw new Error(`${where}/${key}: a keyword draft-07 does not know; testbay.schema.json is draft-07`);
    }
    if (key === "$ref" && typeof value === "string") {
      if (!value.startsWith(componentRef)) throw new Error(`${where}: unexpected $ref ${value}`);
      const name = value.slice(componentRef.length);
      referenced.add(name);
      out[key] = `${definitionRef}${name}`;
    } else if (key === "discriminator" && value && typeof value === "object") {
      // The mapping repeats what oneOf says; Ajv refuses it and JSON Schema editors ignore the keyword anyway.
      const { mapping: _mapping, ...rest } = value as SchemaObject;
      out[key] = rest;
    } else if (key === "properties" || key === "definitions") {
      // Property names are names, not keywords: a property called "type" is not the `type` keyword.
      out[key] = Object.fromEntries(
        Object.entries(value as SchemaObject).map(([name, schema]) => [
          name,
          rewrite(schema, `${where}/${key}/${name}`, referenced),
        ]),
      );
    } else {
      out[key] = rewrite(value, `${where}/${key}`, referenced);
    }
  }
  return out;
}

/** One plan of the file: CreateTestPlan without `package_name`, which the file says once, as `app`. */
function planEntry(createTestPlan: SchemaObject): SchemaObject {
  const { package_name: _packageName, ...properties } = createTestPlan.properties as SchemaObject;
  const required = (createTestPlan.required as string[]).filter((name) => name !== "package_name");
  return {
    ...createTestPlan,
    title: "Test plan",
    description:
      "A test plan of the app, matched to the server's plans by name: created when missing, updated when different.",
    required,
    properties: {
      ...properties,
      name: {
        ...(properties.name as SchemaObject),
        description: "The key plans are matched by: unique within the file.",
      },
    },
  };
}

/** testbay.yaml's schema: `app` and its `plans`, each the body of POST /v1/testplans less the package name. */
export function plansFileSchema(document: OpenApiDocument): SchemaObject {
  const schemas = document.components.schemas;
  const createTestPlan = schemas.CreateTestPlan;
  if (!createTestPlan) throw new Error("the OpenAPI document has no CreateTestPlan schema");
  const packageName = (createTestPlan.properties as SchemaObject).package_name as SchemaObject;

  const definitions: Record<string, unknown> = {};
  const referenced = new Set<string>();
  definitions.PlanEntry = rewrite(planEntry(createTestPlan), "CreateTestPlan", referenced);
  // Follow references until every component the plan needs is in (Step → InspectStep …, DeviceSpec → Platform).
  for (let added = true; added; ) {
    added = false;
    for (const name of [...referenced].sort()) {
      if (name in definitions) continue;
      const component = schemas[name];
      if (!component) throw new Error(`the OpenAPI document has no ${name} schema`);
      definitions[name] = { title: name, ...(rewrite(component, name, referenced) as SchemaObject) };
      added = true;
    }
  }

  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "testbay.yaml",
    description:
      "Test plans kept as code in the app's repository. `testbay plans apply -f testbay.yaml` creates or updates them by name; `testbay plans export --app PACKAGE` writes this file from the server's plans.",
    type: "object",
    required: ["app", "plans"],
    additionalProperties: false,
    properties: {
      app: {
        ...packageName,
        description:
          "The app's exact, case-sensitive package name (Android) or bundle ID (iOS): one app per file. Register it once with `testbay apps create`.",
      },
      plans: {
        type: "array",
        minItems: 1,
        maxItems: 100,
        items: { $ref: `${definitionRef}PlanEntry` },
        description: "The app's test plans, names unique within the file.",
      },
    },
    definitions: Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => a.localeCompare(b))),
  };
}
