import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { openApiFiles } from "../../../../scripts/openapi-files.ts";
import { generateApiTypes } from "../../../../scripts/openapi-types.ts";
import { plansFileSchema } from "../../../../scripts/testbay-yaml/schema-from-openapi.ts";
import { plansValidatorModule } from "../../../../scripts/testbay-yaml/validator-code.ts";
import { testbayYamlSchema } from "../../../client/src/plans/testbay-yaml.schema.generated.ts";
import { buildOpenApiDocument, openApiText } from "./openapi-build.ts";
import { operationDocs } from "./openapi-operations.ts";

const rerun = "is out of date: run `npm run openapi` and commit the result";

interface Document {
  paths: Record<string, Record<string, { operationId: string; parameters?: Array<{ name?: string }> }>>;
}

describe("the committed OpenAPI document and the client types generated from it", () => {
  it("are what the server and openapi-typescript generate now", async () => {
    const generated = openApiText(await buildOpenApiDocument());
    const committed = await readFile(openApiFiles.document, "utf8");
    // A boolean, not a diff of 200 kB: the message says what to do.
    expect(committed === generated, `packages/server/openapi.json ${rerun}`).toBe(true);

    const types = await readFile(openApiFiles.types, "utf8");
    expect(
      types === (await generateApiTypes(committed)),
      `packages/client/src/sdk/api.generated.ts ${rerun}`,
    ).toBe(true);
  });

  it("include testbay.yaml's JSON Schema, as JSON, as a module and compiled into the CLI's validator", async () => {
    const document = JSON.parse(openApiText(await buildOpenApiDocument()));
    const generated = plansFileSchema(document);
    // Compared as values: Biome formats both files after they are written.
    const committed = JSON.parse(await readFile(openApiFiles.plansSchema, "utf8"));
    expect(committed, `packages/client/src/plans/testbay-yaml.schema.json ${rerun}`).toEqual(generated);
    expect(testbayYamlSchema, `packages/client/src/plans/testbay-yaml.schema.generated.ts ${rerun}`).toEqual(
      generated,
    );
    const validator = await readFile(openApiFiles.plansValidator, "utf8");
    expect(
      validator === plansValidatorModule(generated),
      `packages/client/src/plans/testbay-yaml.validate.generated.ts ${rerun}`,
    ).toBe(true);
  });

  it("gives every operation its own operationId from openapi-operations.ts, and no wildcard path", async () => {
    const document = (await buildOpenApiDocument()) as Document;
    const documented: string[] = [];
    const ids: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      expect(path).not.toContain("*");
      for (const [method, operation] of Object.entries(item)) {
        documented.push(`${method} ${path}`);
        ids.push(operation.operationId);
        expect(operation.parameters?.map((p) => p.name) ?? []).not.toContain("*");
      }
    }
    const missing = documented.filter((key) => !operationDocs[key]);
    expect(missing, "add these operations to operationDocs in openapi-operations.ts").toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
