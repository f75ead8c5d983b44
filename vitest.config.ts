import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Tests run the TypeScript sources, never a build: the packages' "source" export condition points at src/*.ts.
// Processes the tests start (servers, agents, CLIs through their bin/ launchers) inherit it through NODE_OPTIONS.
const sourceCondition = "--conditions=source";
if (!process.env.NODE_OPTIONS?.includes(sourceCondition)) {
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, sourceCondition].filter(Boolean).join(" ");
}

// Integration tests (`*.int.test.ts`) run against real HTTP servers, once per database: the same files are
// collected by the `sqlite` and the `postgres` project and told which one to use by TESTBAY_TEST_DB.
const integration = ["packages/*/src/**/*.int.test.ts", "packages/*/test/**/*.int.test.ts"];

// The README's walkthroughs are about the embedded default (SQLite, credentials.json): the sqlite project runs them.
const readmeWalkthroughs = "packages/server/test/readme-walkthroughs.int.test.ts";

// Integration suites of the packages that use the server (SDK/CLI, agent, dashboard) rather than are it.
const clientPackageSuites = ["packages/client/**", "packages/agent/**", "packages/web/**"];

const testConditions = ["source", ...defaultServerConditions.filter((condition) => condition !== "module")];

export default defineConfig({
  // Vitest's own defaults (the server conditions less "module", whose ESM builds of some packages, such as the AWS
  // SDK's, Node cannot load) with "source" in front.
  resolve: { conditions: testConditions },
  ssr: { resolve: { conditions: testConditions } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // The device stand-ins' own tests: they check the models of adb and maestro the agent is tested on.
          include: [
            "packages/*/src/**/*.test.ts",
            "packages/agent/test/stand-ins/*.test.ts",
            "bench/**/*.test.ts",
          ],
          exclude: [...integration, "packages/*/src/**/*.scaled.test.ts"],
        },
      },
      { extends: true, test: { name: "sqlite", include: integration, env: { TESTBAY_TEST_DB: "sqlite" } } },
      {
        extends: true,
        test: {
          name: "postgres",
          include: integration,
          // The SDK/CLI, agent and dashboard suites test those packages through a server, not the server's
          // storage: they run on SQLite and on the scaled set (PostgreSQL too, with two instances), which covers
          // every database path they reach, so a third run on one PostgreSQL instance only lengthened CI.
          exclude: [readmeWalkthroughs, ...clientPackageSuites],
          env: { TESTBAY_TEST_DB: "postgres" },
        },
      },
      // The same suite with every server as two instances behind a round-robin proxy, on PostgreSQL with the
      // shared limiter and blob store, plus the tests only that configuration can run (*.scaled.test.ts).
      {
        extends: true,
        test: {
          name: "scaled",
          include: [...integration, "packages/*/src/**/*.scaled.test.ts"],
          // The fuzz test runs its own server process on the suite's database: scaling adds nothing to it. The
          // early-refusal test measures the server's own socket (bytes read, when it closes): through the scaled
          // set's test proxy it would measure the proxy.
          exclude: [
            "packages/server/test/api-fuzz.int.test.ts",
            "packages/server/src/features/versions/upload/early-refusal.int.test.ts",
            readmeWalkthroughs,
          ],
          env: { TESTBAY_TEST_DB: "postgres", TESTBAY_TEST_SCALED: "true" },
        },
      },
    ],
  },
});
