/**
 * `npm run openapi`: writes the OpenAPI document the server generates to packages/server/openapi.json (what
 * `npm run lint` checks with Redocly) and the client's types generated from it to
 * packages/client/src/sdk/api.generated.ts. openapi-drift.test.ts fails until both are up to date.
 */
import { writeFile } from "node:fs/promises";
import { buildOpenApiDocument, openApiText } from "../packages/server/src/http/openapi-build.ts";
import { openApiFiles } from "./openapi-files.ts";
import { generateApiTypes } from "./openapi-types.ts";

const text = openApiText(await buildOpenApiDocument());
await writeFile(openApiFiles.document, text);
await writeFile(openApiFiles.types, await generateApiTypes(text));
console.log(`wrote ${openApiFiles.document} and ${openApiFiles.types}`);
