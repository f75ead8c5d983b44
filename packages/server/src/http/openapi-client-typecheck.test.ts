import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const project = fileURLToPath(new URL("../../test/openapi-client/tsconfig.json", import.meta.url));

it("type-checks an openapi-fetch client of the generated types (token, upload, batch trigger, execution) and refuses misuse", async () => {
  // flow.ts must compile; every @ts-expect-error in misuse.ts must meet an error, or tsc fails.
  const result = await promisify(execFile)(process.execPath, [tsc, "-p", project], { encoding: "utf8" }).then(
    () => ({ code: 0, output: "" }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? 1,
      output: `${error.stdout ?? ""}${error.stderr ?? ""}`,
    }),
  );
  expect(result.output).toBe("");
  expect(result.code).toBe(0);
});
