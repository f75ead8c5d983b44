/**
 * The last part of `npm run openapi` (package.json): writes the dashboard's step schemas
 * (packages/web/src/pages/plans/step-schemas.generated.ts) from packages/server/openapi.json, which
 * scripts/openapi.ts has just written. The dashboard's step-schemas.test.ts fails until the module is current.
 */
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { openApiFiles } from "../openapi-files.ts";
import { stepSchemasFromOpenApi, stepSchemasModule } from "./step-schemas-from-openapi.ts";

const target = fileURLToPath(
  new URL("../../packages/web/src/pages/plans/step-schemas.generated.ts", import.meta.url),
);
const document = JSON.parse(await readFile(openApiFiles.document, "utf8"));
await writeFile(target, stepSchemasModule(stepSchemasFromOpenApi(document)));
// Checked in and linted: written the way Biome formats it (the test compares values, not text).
execFileSync(
  process.execPath,
  [createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome"), "format", "--write", target],
  { stdio: "inherit" },
);
console.log(`wrote ${target}`);
