import { fileURLToPath } from "node:url";

/** Where the committed OpenAPI document and the files generated from it live. */
export const openApiFiles = {
  document: fileURLToPath(new URL("../packages/server/openapi.json", import.meta.url)),
  types: fileURLToPath(new URL("../packages/client/src/sdk/api.generated.ts", import.meta.url)),
  /** testbay.yaml's JSON Schema: what editors read and the server serves as /downloads/testbay.schema.json. */
  plansSchema: fileURLToPath(
    new URL("../packages/client/src/plans/testbay-yaml.schema.json", import.meta.url),
  ),
  /** The same schema as a module, for the CLI's validation (the bundled CLI has no file beside it to read). */
  plansSchemaModule: fileURLToPath(
    new URL("../packages/client/src/plans/testbay-yaml.schema.generated.ts", import.meta.url),
  ),
  /** The schema compiled ahead of time into a validator (Ajv standalone), which the CLI runs. */
  plansValidator: fileURLToPath(
    new URL("../packages/client/src/plans/testbay-yaml.validate.generated.ts", import.meta.url),
  ),
};
