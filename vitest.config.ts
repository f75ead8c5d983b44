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

// The container images (Dockerfile, Dockerfile.agent, compose.yaml) built and run with Docker: their own project
// (`npm run test:container` alone), in `npm test` too. Without a Docker engine it is skipped, saying so. From
// nothing cached, base image and both builds took under four minutes of a quiet 2-core machine (docs/operating.md,
// "Container images").
const containerSuites = ["packages/server/test/container/*.int.test.ts"];

// The walkthroughs of README.md and docs/*.md are about the embedded default (SQLite, credentials.json): the
// sqlite project runs them.
// Before the integration suites: the CLIs they start as child processes, bundled from the sources
// (scripts/test-bins/bundle-bins.ts).
const bundleBins = "scripts/test-bins/bundle-bins.ts";

const readmeWalkthroughs = "packages/server/test/readme-walkthroughs.int.test.ts";

// Server suites about HTTP and the process, not storage: how bodies, headers, proxies, limits' texts, the API
// reference, downloads and the dashboard's files are served does not depend on the database, so the postgres
// project leaves them to the sqlite one. (Text PostgreSQL cannot store, http/unstorable-text.int.test.ts, and
// the fuzz test, which finds such text, run on both.)
const databaseIndependentSuites = [
  "packages/server/src/http/{http,api-reference,body-idle-timeout,request-log}.int.test.ts",
  "packages/server/src/features/people/{https-proxy-warning,trusted-proxies}.int.test.ts",
  "packages/server/src/features/{api-index,downloads,web}/**/*.int.test.ts",
  "packages/server/src/features/versions/upload/{early-refusal,stalled-body}.int.test.ts",
  "packages/server/src/limits-and-fixes.int.test.ts",
  "packages/server/test/openapi-client.int.test.ts",
  // The admin CLI's suites: their tests about PostgreSQL make their own PostgreSQL database wherever they run.
  "packages/server/src/cli/*.int.test.ts",
  "packages/server/test/signing-keys-across-instances.int.test.ts",
  // The Grafana dashboard's and the guide's Prometheus queries checked with promtool: no database in it.
  "packages/server/src/features/metrics/docs-queries.int.test.ts",
];

// Integration suites of the packages that use the server (SDK/CLI, agent, dashboard) rather than are it.
const clientPackageSuites = ["packages/client/**", "packages/agent/**", "packages/web/**"];

// What two instances on shared PostgreSQL, Redis and S3 change, and so what the scaled project runs: tokens signed by
// one instance and checked by the other; rate limits and sign-in slowdown counted in Redis; sessions, CSRF and
// single sign-on state across instances; claims, leases and shards of device runs; idempotent triggers; live
// events and webhook deliveries sent from whichever instance; and bytes in S3 (uploads, test packages,
// artifacts, logs, ranges), through the server's suites and the agent and dashboard suites that read them back.
const scaledSuites = [
  "packages/server/src/features/{auth,people,ratelimit,agent,device-runs,live,webhooks,versions,executions}/**/*.int.test.ts",
  "packages/server/src/features/triggers/triggers.int.test.ts",
  "packages/server/src/storage/**/*.int.test.ts",
  // WebDriver commands relayed to the agent's channel from whichever instance they reach.
  "packages/server/src/features/sessions/channel/channel.int.test.ts",
  "packages/agent/test/{agent-e2e,android-shards,android-retries}.int.test.ts",
  // testbay flank run end to end (API.md §14): version files in S3, the plan and its shards on PostgreSQL.
  "packages/agent/test/flank-run.int.test.ts",
  // An Appium session through either instance while the agent's channel is held by one of them (API.md §12).
  "packages/agent/test/appium/agent-appium.int.test.ts",
  "packages/client/src/cli/wait-restart.int.test.ts",
  "packages/web/test/{live-updates,failure-evidence,cross-site-requests}.int.test.ts",
];

const testConditions = ["source", ...defaultServerConditions.filter((condition) => condition !== "module")];

export default defineConfig({
  // Vitest's own defaults (the server conditions less "module", whose ESM builds of some packages, such as the AWS
  // SDK's, Node cannot load) with "source" in front.
  resolve: { conditions: testConditions },
  ssr: { resolve: { conditions: testConditions } },
  test: {
    // Vitest's default on a 2-core machine is one test file at a time (the cores less one); the integration
    // files mostly wait on servers, child processes and Chromium, so four at a time keep both cores busy.
    // CI (.ci/run on 2 cores): 1,521 s with one file at a time, 962 s with four.
    maxWorkers: 4,
    // A worker runs one file after another in the same module graph instead of loading the server's modules
    // again for every file (isolate: false). The suites share no state through modules: each starts its own
    // servers, databases and folders, and puts back what it stubs (env below). Measured on 2 cores, the client
    // package's integration suites: 160 s wall / 74 s CPU isolated, 80 s / 39 s not; the unit project 202 s /
    // 130 s → 157 s / 101 s.
    isolate: false,
    unstubEnvs: true,
    unstubGlobals: true,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Under CI a test that fails runs once more: on the 2-core CI machine, four files at a time, a loaded moment
    // can outlast a wait and fail one test of three thousand, which fails the whole submission. A test that
    // passed only on its retry is listed at the end of the run with the error of its failed attempt
    // (scripts/test-reporters/passed-on-retry.ts), to be fixed at its cause; locally nothing is retried.
    retry: process.env.CI ? 1 : 0,
    reporters: ["default", "./scripts/test-reporters/passed-on-retry.ts"],
    // expect.poll waits for what a page or a server does on its own; Vitest's default second is too short a wait
    // on a loaded 2-core machine (a wait for a condition, never a limit a test asserts).
    expect: { poll: { timeout: 10_000 } },
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
      {
        extends: true,
        test: {
          name: "sqlite",
          include: integration,
          exclude: containerSuites,
          globalSetup: bundleBins,
          env: { TESTBAY_TEST_DB: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          include: integration,
          globalSetup: bundleBins,
          // The SDK/CLI, agent and dashboard suites test those packages through a server, not the server's
          // storage, whose every PostgreSQL path the server's own suites run here: they run on SQLite, and those
          // that scaling concerns on the scaled set too (scaledSuites).
          // The scaled set runs its suites on PostgreSQL too (two instances, Redis and S3 besides): not again here.
          exclude: [
            ...containerSuites,
            readmeWalkthroughs,
            ...databaseIndependentSuites,
            ...clientPackageSuites,
            ...scaledSuites,
          ],
          env: { TESTBAY_TEST_DB: "postgres" },
        },
      },
      // Every server as two instances behind a round-robin proxy, on PostgreSQL with Redis (limits, sign-in counts)
      // and S3 (binaries, artifacts, logs), plus the tests only that configuration can run (*.scaled.test.ts). It
      // runs the suites whose behaviour scaling changes, not the whole suite a third time: what is only stored
      // in the database is covered by the postgres project. Kept at that, CI stays near 15 minutes on 2 cores.
      {
        extends: true,
        test: {
          name: "scaled",
          include: [...scaledSuites, "packages/*/src/**/*.scaled.test.ts"],
          globalSetup: bundleBins,
          // The early-refusal test measures the server's own socket (bytes read, when it closes): through the
          // scaled set's test proxy it would measure the proxy.
          exclude: ["packages/server/src/features/versions/upload/early-refusal.int.test.ts"],
          env: { TESTBAY_TEST_DB: "postgres", TESTBAY_TEST_SCALED: "true" },
        },
      },
      {
        extends: true,
        test: {
          name: "container",
          include: containerSuites,
          // An image build is minutes long on 2 cores.
          testTimeout: 45 * 60_000,
          hookTimeout: 45 * 60_000,
        },
      },
    ],
  },
});
