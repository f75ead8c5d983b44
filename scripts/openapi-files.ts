import { fileURLToPath } from "node:url";

/** Where the committed OpenAPI document and the types generated from it live. */
export const openApiFiles = {
  document: fileURLToPath(new URL("../packages/server/openapi.json", import.meta.url)),
  types: fileURLToPath(new URL("../packages/client/src/sdk/api.generated.ts", import.meta.url)),
};
