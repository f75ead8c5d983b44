import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The repository's unit project only collects packages/*/src/**/*.test.ts; until it also lists this
// folder, run these with `npx vitest run --config packages/agent/test/stand-ins/vitest.config.ts`.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL(".", import.meta.url)),
    include: ["**/*.test.ts"],
    testTimeout: 30_000,
  },
});
